import { Duration } from 'aws-cdk-lib';
import { Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { type BusinessMetricName, businessMetrics } from '../definitions/metrics';

/** A business metric with the service dimension and any others, summed per period. */
export function businessMetric(
  metricName: BusinessMetricName,
  dimensions: Record<string, string> = {},
  period = Duration.minutes(5),
): Metric {
  return new Metric({
    namespace: businessMetrics.namespace,
    metricName,
    dimensionsMap: { service: businessMetrics.serviceName, ...dimensions },
    statistic: Stats.SUM,
    period,
  });
}
