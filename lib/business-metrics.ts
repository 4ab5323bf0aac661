import { Duration } from 'aws-cdk-lib';
import { Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';

/**
 * The custom metrics the functions publish with Powertools for AWS Lambda
 * Metrics (embedded metric format): namespace PetStore, dimension
 * service=petstore, plus one dimension per metric. The dashboard and the 429
 * alarm read them; functions/runtime/metrics.ts writes them (the infrastructure
 * tests check that the two agree).
 */
export const businessMetrics = {
  namespace: 'PetStore',
  /** POWERTOOLS_SERVICE_NAME of every function, and the `service` dimension of every metric. */
  serviceName: 'petstore',
  names: {
    /** One per pet created (an idempotent replay creates nothing and counts nothing). */
    petsCreated: 'PetsCreated',
    /** One per 4xx answer of a function, dimension `code` (the Error object's code). */
    clientErrors: 'ClientErrors',
    /** One per 429 of our rate limiter, dimension `plan`. */
    rateLimited: 'RateLimited',
  },
} as const;

export type BusinessMetricName = (typeof businessMetrics.names)[keyof typeof businessMetrics.names];

/** A business metric with the service dimension and any others, summed per period. */
export function businessMetric(metricName: BusinessMetricName, dimensions: Record<string, string> = {}, period = Duration.minutes(5)): Metric {
  return new Metric({
    namespace: businessMetrics.namespace,
    metricName,
    dimensionsMap: { service: businessMetrics.serviceName, ...dimensions },
    statistic: Stats.SUM,
    period,
  });
}
