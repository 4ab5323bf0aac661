import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { businessMetrics } from '../../definitions/metrics';
import type { PlanName } from '../../definitions/plans';

/**
 * Business metrics, as CloudWatch embedded-metric-format lines on stdout
 * (Powertools for AWS Lambda): namespace PetStore, dimension service=petstore.
 * The dashboard and the 429 alarm read these names. Off locally and in tests
 * (POWERTOOLS_METRICS_DISABLED), where nobody collects them.
 */
export const metrics = new Metrics({
  namespace: businessMetrics.namespace,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? businessMetrics.serviceName,
});

export const metricNames = businessMetrics.names;

/** Counts what a response says about the product: 4xx by code, 429 by plan. */
export function recordResponse(target: Metrics, response: { statusCode: number; body?: string }, plan: PlanName | undefined): void {
  if (response.statusCode < 400 || response.statusCode >= 500) return;
  const code = errorCodeOf(response.body);
  target.singleMetric().addDimension('code', code).addMetric(metricNames.clientErrors, MetricUnit.Count, 1);
  if (response.statusCode === 429) {
    target.singleMetric().addDimension('plan', plan ?? 'unknown').addMetric(metricNames.rateLimited, MetricUnit.Count, 1);
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
