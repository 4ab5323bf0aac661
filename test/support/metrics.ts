import type { Metrics } from '@aws-lambda-powertools/metrics';
import { buildMetrics } from '../../functions/runtime/metrics';

/**
 * Runs `run` with metrics enabled (tests disable them by default), given a
 * business Metrics instance, and returns its result with the CloudWatch EMF
 * lines written to stdout meanwhile (the canary lines too), parsed.
 */
export async function captureMetrics<T>(
  run: (metrics: Metrics) => T | Promise<T>,
): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const saved = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  const written: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
  try {
    // Built as the functions build theirs (functions/runtime/metrics.ts), from the environment.
    const result = await run(buildMetrics());
    const lines = written.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    return { result, lines };
  } finally {
    spy.mockRestore();
    process.env.POWERTOOLS_METRICS_DISABLED = saved;
  }
}
