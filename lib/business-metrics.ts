import { Duration } from 'aws-cdk-lib';
import { Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { type BusinessMetricName, businessMetrics } from '../definitions/metrics';

/**
 * A business metric of one stage (its `stage` dimension: staging's 429s never
 * move production's alarms), with the service dimension and any others,
 * summed per period.
 */
export function businessMetric(
  stage: string,
  metricName: BusinessMetricName,
  dimensions: Record<string, string> = {},
  period = Duration.minutes(5),
): Metric {
  return new Metric({
    namespace: businessMetrics.namespace,
    metricName,
    dimensionsMap: { service: businessMetrics.serviceName, stage, ...dimensions },
    statistic: Stats.SUM,
    period,
  });
}
