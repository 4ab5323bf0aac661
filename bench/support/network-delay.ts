import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface NetworkDelay {
  /** DynamoDB's endpoint behind the delay. */
  endpoint: string;
  stop(): Promise<void>;
}

/** Starts network-delay-relay.mjs in front of `upstreamEndpoint`: every request then waits `roundTripMs` more. */
export function startNetworkDelay(upstreamEndpoint: string, roundTripMs: number): Promise<NetworkDelay> {
  const upstreamPort = new URL(upstreamEndpoint).port;
  const child = spawn(process.execPath, [join(__dirname, 'network-delay-relay.mjs'), upstreamPort, String(roundTripMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`network-delay-relay.mjs exited with ${code} before listening`)));
    child.stdout.once('data', (chunk: Buffer) => resolve({ endpoint: `http://127.0.0.1:${chunk.toString().trim()}`, stop }));
  });
}
