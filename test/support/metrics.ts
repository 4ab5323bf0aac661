import type { Metrics } from '@aws-lambda-powertools/metrics';
import { buildMetrics, type MetricsKind } from '../../functions/runtime/metrics';

/**
 * Runs `run` with a business Metrics instance enabled (tests disable metrics
 * by default) and returns its result with the CloudWatch EMF lines written to
 * stdout meanwhile, parsed.
 */
export async function captureMetrics<T>(
  run: (metrics: Metrics) => T | Promise<T>,
  kind: MetricsKind = 'business',
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
    const result = await run(buildMetrics(kind));
    const lines = written.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    return { result, lines };
  } finally {
    spy.mockRestore();
    process.env.POWERTOOLS_METRICS_DISABLED = saved;
  }
}
