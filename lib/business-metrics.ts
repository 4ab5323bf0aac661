import { Duration } from 'aws-cdk-lib';
import { Metric, Stats } from 'aws-cdk-lib/aws-cloudwatch';
import { type BusinessMetricName, businessMetrics } from '../definitions/metrics';

/**
 * A business metric of one stage (its `stage` dimension: staging's 429s never
 * move production's alarms), with the service dimension and any others,
 * summed per period. The canary metrics have their own dimensions: canaryMetric.
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

/**
 * A canary metric of one stage's function (its `function` dimension: the
 * function's metricsName), of one version or, without `version`, of all its
 * versions together; no service dimension (definitions/metrics.ts, canaryDimensions).
 */
export function canaryMetric(
  stage: string,
  metricName: BusinessMetricName,
  series: { function: string; version?: string },
  period = Duration.minutes(5),
): Metric {
  const dims = businessMetrics.canaryDimensions;
  return new Metric({
    namespace: businessMetrics.namespace,
    metricName,
    dimensionsMap: {
      stage,
      [dims.function]: series.function,
      ...(series.version === undefined ? {} : { [dims.version]: series.version }),
    },
    statistic: Stats.SUM,
    period,
  });
}
