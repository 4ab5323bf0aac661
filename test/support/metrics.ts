import { Metrics } from '@aws-lambda-powertools/metrics';
import { businessMetrics } from '../../definitions/metrics';

/**
 * Runs `run` with a business Metrics instance enabled (tests disable metrics
 * by default) and returns its result with the CloudWatch EMF lines written to
 * stdout meanwhile, parsed.
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
    const result = await run(new Metrics({ namespace: businessMetrics.namespace, serviceName: businessMetrics.serviceName }));
    const lines = written.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    return { result, lines };
  } finally {
    spy.mockRestore();
    process.env.POWERTOOLS_METRICS_DISABLED = saved;
  }
}
