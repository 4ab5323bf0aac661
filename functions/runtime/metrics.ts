import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { businessMetrics } from '../../definitions/metrics';
import type { PlanName } from '../../definitions/plans';

let instance: Metrics | undefined;

/**
 * Business metrics, as CloudWatch embedded-metric-format lines on stdout
 * (Powertools for AWS Lambda): namespace PetStore, dimensions service=petstore
 * and stage (when the stack sets it: stageDimensions).
 * The dashboard and the 429 alarm read these names. Off locally and in tests
 * (POWERTOOLS_METRICS_DISABLED), where nobody collects them.
 *
 * Built at the first metric, not at import: most requests (2xx reads) record
 * none, so most containers never pay for building it during their cold start.
 */
export const metrics: Metrics = new Proxy({} as Metrics, {
  get(_target, property) {
    instance ??= new Metrics({
      namespace: businessMetrics.namespace,
      serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? businessMetrics.serviceName,
      defaultDimensions: stageDimensions(),
    });
    const value: unknown = Reflect.get(instance, property, instance);
    return typeof value === 'function' ? value.bind(instance) : value;
  },
});

/** The `stage` dimension every business metric carries, from the environment the stack gives each function. */
export function stageDimensions(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const stage = env[businessMetrics.stageEnvVar];
  return stage ? { stage } : {};
}

/** Publishes what this request buffered (PetsCreated); publishing an empty buffer would only log a warning. */
export function publishBufferedMetrics(): void {
  if (instance?.hasStoredMetrics()) instance.publishStoredMetrics();
}

export const metricNames = businessMetrics.names;

/** Counts what a response says about the product: 4xx by code, 429 by plan. */
export function recordResponse(target: Metrics, response: { statusCode: number; body?: string }, plan: PlanName | undefined): void {
  if (response.statusCode < 400 || response.statusCode >= 500) return;
  const code = errorCodeOf(response.body);
  target.singleMetric().addDimension('code', code).addMetric(metricNames.clientErrors, MetricUnit.Count, 1);
  if (response.statusCode === 429) {
    target
      .singleMetric()
      .addDimension('plan', plan ?? 'unknown')
      .addMetric(metricNames.rateLimited, MetricUnit.Count, 1);
  }
}

export function recordPetCreated(target: Metrics = metrics): void {
  target.addMetric(metricNames.petsCreated, MetricUnit.Count, 1);
}

function errorCodeOf(body: string | undefined): string {
  try {
    const code = (JSON.parse(body ?? '{}') as { code?: unknown }).code;
    return typeof code === 'string' ? code : 'unknown';
  } catch {
    return 'unknown';
  }
}
