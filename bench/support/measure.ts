import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** One side of a comparison: a handler and how to make its next request. */
export interface Contender {
  id: string;
  handler: ProxyHandler;
  /** The event and context of the i-th invocation, made before the clock starts. */
  next(i: number): { event: APIGatewayProxyEvent; context: Context };
  expectedStatus: number;
}

/**
 * Sequential invocations of every contender, interleaved in batches of 25 (the order
 * of the contenders rotates every round) so that the noise of a shared
 * machine falls on all of them alike. Returns the latency of every measured
 * invocation in milliseconds, after `warmup` unmeasured ones each.
 */
export async function measureInterleaved(
  contenders: readonly Contender[],
  options: { iterations: number; warmup: number; batch?: number; onProgress?: (done: number, total: number) => void },
): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(contenders.map((contender) => [contender.id, []]));
  const counters = new Map<string, number>(contenders.map((contender) => [contender.id, 0]));
  const invoke = async (contender: Contender): Promise<number> => {
    const i = counters.get(contender.id) ?? 0;
    counters.set(contender.id, i + 1);
    const { event, context } = contender.next(i);
    const start = performance.now();
    const result = await contender.handler(event, context);
    const elapsed = performance.now() - start;
    if (result?.statusCode !== contender.expectedStatus) {
      throw new Error(`${contender.id} answered ${result?.statusCode} instead of ${contender.expectedStatus}: ${result?.body}`);
    }
    return elapsed;
  };
  for (const contender of contenders) for (let i = 0; i < options.warmup; i++) await invoke(contender);
  const batch = options.batch ?? 25;
  const rounds = Math.ceil(options.iterations / batch);
  const total = rounds * batch * contenders.length;
  let done = 0;
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(round + k) % contenders.length] as Contender;
      const into = samples.get(contender.id) as number[];
      for (let i = 0; i < batch; i++) into.push(await invoke(contender));
      done += batch;
    }
    options.onProgress?.(done, total);
  }
  return samples;
}

export interface ColdInitSample {
  initMs: number;
  cpuMs: number;
  bootMs: number;
  heapUsedBytes: number;
}

/** Runs the cold-init probe once in a fresh `node` process. */
export function coldInitOnce(probe: string, bundle: string, env: NodeJS.ProcessEnv): Promise<ColdInitSample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [probe, bundle], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{'))
        return reject(new Error(`cold-init probe failed (exit ${code}): ${stderr.trim() || stdout.trim()}`));
      resolve(JSON.parse(line) as ColdInitSample);
    });
  });
}
