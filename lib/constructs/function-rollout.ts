import { type CfnElement, Duration, Lazy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IMetric, MathExpression, Metric, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  type ILambdaDeploymentConfig,
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
  TrafficRouting,
} from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Alias, type IFunction, type Version } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { type BusinessMetricName, businessMetrics } from '../../definitions/metrics';
import { canaryMetric } from '../business-metrics';
import { canary, type Rollout, rollbackAlarmEvaluation, rollbackThresholds } from '../stage-config';
import type { OperationFunction } from './operation-function';

/** The alias API Gateway invokes. */
export const LIVE_ALIAS = 'live';

/**
 * How a comparison alarm tells a worse new version from chance (docs/operators.md,
 * "How sure the comparisons are"): a difference counts only when it is at least
 * `z` standard errors of the difference under equal rates — a two-proportion
 * z-test, pooled, for failure shares; the same bound for mean latency, with each
 * version's variance bounded by (max − mean)(mean − min) (Bhatia–Davis), since
 * CloudWatch keeps no sum of squares. The failure shares are judged on the calls
 * of the last `windowMinutes` minutes together, re-judged every minute (a sliding
 * window: "Alarm evaluation window",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-evaluation-window.html),
 * not minute by minute: 10 calls a minute cannot tell 30 points from chance in
 * one minute. z = 3.5 is one chance in about 4,300 per judgement under equal
 * rates; test/integration/rollback-alarms.test.ts measures what it gives.
 */
export const canaryVerdict = { z: 3.5, windowMinutes: rollbackAlarmEvaluation().evaluationPeriods } as const;

export interface FunctionRolloutProps {
  applicationName: string;
  rollout: Rollout;
  /** Prefix of the rollback alarms' names (the stack name). */
  alarmNamePrefix: string;
  /** The stage: the `stage` dimension of the canary metrics the alarms read. */
  stage: string;
}

/** What a function's rollback alarms compare: its latency metric (whose SampleCount counts its calls) and the metrics of its failures. */
interface CanaryMetricsOf {
  latency: BusinessMetricName;
  /** Failures of a new version that roll it back at `serverErrorsPerMinute`, whatever the old version does. */
  ownFailures: { metric: BusinessMetricName; means: string }[];
  /** Failures that roll it back only when their share beats the old version's by `rateMarginPercent`. */
  comparedFailures: { metric: BusinessMetricName; means: string }[];
}

const names = businessMetrics.names;
const canaryMetricsOf: Record<'operation' | 'authorizer', CanaryMetricsOf> = {
  operation: {
    latency: names.answerLatency,
    ownFailures: [{ metric: names.serverErrors, means: 'answered 500 (internal_error: a bug of ours; a dependency failure is a 503)' }],
    comparedFailures: [{ metric: names.unavailable, means: 'answered 503 (a dependency failed)' }],
  },
  authorizer: {
    latency: names.keyCheckLatency,
    ownFailures: [],
    comparedFailures: [
      { metric: names.keysRefused, means: 'refused keys (401 unauthorized)' },
      { metric: names.keyStoreFailures, means: 'could not check keys (clients got 503)' },
    ],
  },
};

/** The function's new version and all its versions together: the old version's series is their difference. */
interface Series {
  fn: OperationFunction;
  version: Version;
}

/**
 * Each function published as a version behind the `live` alias, which API
 * Gateway invokes, and a CodeDeploy deployment group that moves the alias on
 * each deployment. In a `canary` stage CodeDeploy sends `canary.percentage` of
 * the traffic to the new version for `canary.intervalMinutes`, then all of it
 * ("Working with deployment configurations in CodeDeploy",
 * https://docs.aws.amazon.com/codedeploy/latest/userguide/deployment-configurations.html).
 * In an `allAtOnce` stage (staging) it moves the alias at once, so staging
 * rehearses the same mechanism without the wait.
 *
 * Before any traffic moves, the BeforeAllowTraffic hook (addPreTrafficCheck)
 * calls the new versions; then the group rolls back when one of its alarms
 * goes to ALARM during the deployment, whatever made it fire ("Monitoring
 * deployments with CloudWatch alarms in CodeDeploy",
 * https://docs.aws.amazon.com/codedeploy/latest/userguide/monitoring-create-alarms.html).
 * So the group watches only what a new version causes, from what its clients
 * got (the canary metrics each function emits, definitions/metrics.ts): its
 * own 500s; its 503s, refused keys, keys it could not check and latency only
 * where they are worse than the old version's by a margin (metric math on the
 * new version's series and the function's series across versions); and, for
 * the operations, Lambda's Errors of the new version (crashes and timeouts,
 * which emit no metric of ours). A dependency's trouble moves both versions
 * alike, so a fix deploys during an incident; stage-wide alarms only notify.
 */
export class FunctionRollout extends Construct {
  readonly application: LambdaApplication;
  readonly groups: LambdaDeploymentGroup[] = [];
  /** The alarms the deployment groups roll back on, all on a new version's own metrics. */
  readonly rollbackAlarms: Alarm[] = [];
  readonly deploymentConfig: ILambdaDeploymentConfig;
  /** Each function's new version and the ARN of its live alias, by name: what the pre-traffic check calls. */
  readonly targets: Record<string, { fn: OperationFunction; version: Version; liveArn: string; alias: Alias }> = {};

  constructor(
    scope: Construct,
    id: string,
    private readonly props: FunctionRolloutProps,
  ) {
    super(scope, id);
    this.application = new LambdaApplication(this, 'Application', { applicationName: props.applicationName });
    // A deployment config of the stack's own in both stages, from the one canary setting.
    this.deploymentConfig = new LambdaDeploymentConfig(this, 'TrafficShift', {
      trafficRouting:
        props.rollout === 'canary'
          ? TrafficRouting.timeBasedCanary({ interval: Duration.minutes(canary.intervalMinutes), percentage: canary.percentage })
          : TrafficRouting.allAtOnce(),
    });
  }

  /**
   * The rollback alarms notify the stage's alarm topic when they fire: a
   * rollback is news. Not when they are OK: every deployment creates them
   * anew (versionKey), and each goes from INSUFFICIENT_DATA to OK within
   * minutes, 3 or 4 notifications per changed function that say nothing and
   * teach operators to ignore the topic; CodeDeploy reports the deployment's
   * end itself.
   */
  notify(topic: ITopic): void {
    const action = new SnsAction(topic);
    for (const alarm of this.rollbackAlarms) alarm.addAlarmAction(action);
  }

  /** The alias of `fn`'s current version, moved by its deployment group, which rolls back on the new version's alarms. */
  liveAlias(fn: OperationFunction, kind: 'operation' | 'authorizer'): Alias {
    const name = fn.metricsName;
    const version = fn.currentVersion;
    const alias = new Alias(fn, 'LiveAlias', { aliasName: LIVE_ALIAS, version });
    // Not alias.functionArn: the check must not depend on the alias, whose update waits for the check.
    this.targets[name] = { fn, version, liveArn: `${fn.functionArn}:${LIVE_ALIAS}`, alias };
    const alarms = this.alarmsFor(name, { fn, version }, kind);
    // The alarms follow the new version before CodeDeploy starts moving the alias to it.
    for (const alarm of alarms) alias.node.addDependency(alarm);
    this.rollbackAlarms.push(...alarms);
    const group = new LambdaDeploymentGroup(this, `${name}Deployment`, {
      application: this.application,
      alias,
      deploymentConfig: this.deploymentConfig,
      alarms,
    });
    // The group's alarm list names the new version's alarms (versionKey) before the alias update starts its
    // deployment: a Ref in the alias's UpdatePolicy is no DependsOn, and the previous list names the old alarms.
    alias.node.addDependency(group);
    Validations.of(group).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's service role for Lambda deployments; AWS's managed policy is the documented one and is limited to shifting aliases of Lambda functions.",
    });
    this.groups.push(group);
    return alias;
  }

  /**
   * Makes `check` the BeforeAllowTraffic hook of every deployment group: it may
   * invoke each function's new version and live alias, nothing else of
   * Lambda's, and CodeDeploy grants it the status report of its groups.
   */
  addPreTrafficCheck(check: IFunction): void {
    for (const group of this.groups) {
      group.addPreHook(check);
      const checkId = Stack.of(this).getLogicalId(check.node.defaultChild as CfnElement);
      Validations.of(group).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${checkId}.Arn>:*]`,
        reason:
          "CodeDeploy's role may invoke the pre-traffic check function and its versions (addPreHook grants both); that one function only.",
      });
    }
    const resources = Object.values(this.targets).flatMap(({ version, liveArn }) => [version.functionArn, liveArn]);
    check.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources }));
    // The check (its list of new versions, its grants) is updated before any alias starts a deployment that calls it.
    for (const { alias } of Object.values(this.targets)) alias.node.addDependency(check);
  }

  /** The check's targets as its environment expects them (definitions/deployment-check.ts). */
  checkTargets(authorizerName: string): string {
    const pair = (name: string) => ({ version: this.targets[name]!.version.functionArn, live: this.targets[name]!.liveArn });
    const operations = Object.fromEntries(
      Object.keys(this.targets)
        .filter((name) => name !== authorizerName)
        .map((name) => [name, pair(name)]),
    );
    return Stack.of(this).toJsonString({ authorizer: pair(authorizerName), operations });
  }

  private alarmsFor(name: string, series: Series, kind: 'operation' | 'authorizer'): Alarm[] {
    const spec = canaryMetricsOf[kind];
    const alarms = spec.ownFailures.map((failure) => this.ownFailureAlarm(name, series, failure));
    alarms.push(...spec.comparedFailures.map((failure) => this.comparedRateAlarm(name, series, spec.latency, failure)));
    alarms.push(this.comparedLatencyAlarm(name, series, spec.latency));
    if (kind === 'operation') alarms.push(this.crashAlarm(name, series));
    return alarms;
  }

  /** One of the function's canary metrics: of the new version (`version` dimension), or of every version together. */
  private canaryMetric(
    series: Series,
    metric: BusinessMetricName,
    statistic: string,
    scope: 'new' | 'all',
    period = Duration.seconds(rollbackAlarmEvaluation().periodSeconds),
  ): Metric {
    const version = scope === 'new' ? series.version.version : undefined;
    return canaryMetric(this.props.stage, metric, { function: series.fn.metricsName, version }, period).with({ statistic });
  }

  /**
   * Eight hex digits of the version's logical id, which ends in a hash of the
   * function's configuration and code: it changes exactly when a deployment
   * publishes a new version. In the alarm's name, it makes every new version's
   * rollback alarms new alarms. Updating an alarm leaves its state unchanged
   * ("PutMetricAlarm": "When you update an existing alarm, its state is left
   * unchanged", https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html),
   * so an alarm still in ALARM from the previous version would stop the next
   * deployment at its start; a new name is a replacement ("AWS::CloudWatch::Alarm",
   * AlarmName: "Update requires: Replacement",
   * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-cloudwatch-alarm.html),
   * created before the alias moves and starting in INSUFFICIENT_DATA, never ALARM.
   */
  private versionKey(version: Version): string {
    const stack = Stack.of(this);
    const cfnVersion = version.node.defaultChild as CfnElement;
    return Lazy.string({ produce: () => (stack.resolve(cfnVersion.logicalId) as string).slice(-8) });
  }

  private rollbackAlarm(
    id: string,
    version: Version,
    text: { means: string; todo: string },
    metric: IMetric,
    threshold: number,
    evaluation: { periods?: number; datapoints?: number } = {},
  ): Alarm {
    const { evaluationPeriods: defaultPeriods } = rollbackAlarmEvaluation();
    const evaluationPeriods = evaluation.periods ?? defaultPeriods;
    return new Alarm(this, id, {
      alarmName: `${this.props.alarmNamePrefix}-${id}-${this.versionKey(version)}`,
      alarmDescription: `Means: the newest version of ${text.means} During a deployment CodeDeploy then moves the live alias back to the previous version; at other times this only notifies. Do: ${text.todo}`,
      metric,
      threshold,
      evaluationPeriods,
      datapointsToAlarm: Math.min(evaluation.datapoints ?? 1, evaluationPeriods),
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No datapoint means no failure was counted. A new version always gets
      // calls: the pre-traffic check's ("Configuring how CloudWatch alarms treat missing data",
      // https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html).
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  private ownFailureAlarm(name: string, series: Series, failure: { metric: BusinessMetricName; means: string }): Alarm {
    const t = rollbackThresholds.serverErrorsPerMinute;
    return this.rollbackAlarm(
      `${name}NewVersion${failure.metric}`,
      series.version,
      {
        means: `${name} (during a deployment, the canary) ${failure.means} ${t} time(s) or more in a minute.`,
        todo: `read the ${name} log group of that version (level ERROR, "unexpected error"); fix and deploy again.`,
      },
      this.canaryMetric(series, failure.metric, Stats.SUM, 'new'),
      t,
    );
  }

  /**
   * The new version's share of `failure` minus the old version's, in percentage
   * points, over the calls of the last canaryVerdict.windowMinutes minutes
   * (one period that long, re-judged every minute), where it is significant
   * (compared()): metric math on the new version's series and the function's
   * across versions ("Using math expressions with CloudWatch metrics", IF and FILL,
   * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).
   */
  private comparedRateAlarm(
    name: string,
    series: Series,
    latency: BusinessMetricName,
    failure: { metric: BusinessMetricName; means: string },
  ): Alarm {
    const { rateMarginPercent: margin, minCalls } = rollbackThresholds;
    const window = Duration.minutes(canaryVerdict.windowMinutes);
    const metrics = {
      newCalls: this.canaryMetric(series, latency, Stats.SAMPLE_COUNT, 'new', window),
      allCalls: this.canaryMetric(series, latency, Stats.SAMPLE_COUNT, 'all', window),
      newFailed: this.canaryMetric(series, failure.metric, Stats.SUM, 'new', window),
      allFailed: this.canaryMetric(series, failure.metric, Stats.SUM, 'all', window),
    };
    const pooled = per('FILL(allFailed, 0)', 'FILL(allCalls, 0)');
    const expression = compared({
      newMean: per('FILL(newFailed, 0)', NEW_CALLS),
      oldMean: per('(FILL(allFailed, 0) - FILL(newFailed, 0))', OLD_CALLS),
      // Under equal rates both shares estimate the pooled one: p(1 − p)(1/n + 1/m).
      variance: `${pooled} * (1 - ${pooled}) * (${inverse(NEW_CALLS)} + ${inverse(OLD_CALLS)})`,
      scale: 100,
    });
    return this.rollbackAlarm(
      `${name}NewVersion${failure.metric}`,
      series.version,
      {
        means: `${name} (during a deployment, the canary) ${failure.means} for a share of its calls at least ${margin} points above the previous version's, over the last ${canaryVerdict.windowMinutes} minutes (with ${minCalls} calls or more), and too far above it to be chance (z >= ${canaryVerdict.z}).`,
        todo: `compare the versions' ${failure.metric} on the dashboard and read the ${name} log group of the new version; a dependency in trouble moves both versions alike and fires nothing here.`,
      },
      new MathExpression({
        expression,
        usingMetrics: metrics,
        label: `${failure.metric}: new minus old version, % points`,
        period: window,
      }),
      margin,
      { periods: 1 },
    );
  }

  /**
   * The new version's mean latency minus the old version's, in ms, where it is
   * significant, in 2 of the evaluation's minutes: a slow dependency slows both.
   * Each version's variance is bounded by (max − mean)(mean − min) with the
   * function's extremes across versions (Bhatia–Davis): exact for a slowdown
   * that makes some calls slow and leaves the rest fast.
   */
  private comparedLatencyAlarm(name: string, series: Series, latency: BusinessMetricName): Alarm {
    const { latencyMarginMs: margin, minCalls } = rollbackThresholds;
    const metrics = {
      newCalls: this.canaryMetric(series, latency, Stats.SAMPLE_COUNT, 'new'),
      allCalls: this.canaryMetric(series, latency, Stats.SAMPLE_COUNT, 'all'),
      newTotal: this.canaryMetric(series, latency, Stats.SUM, 'new'),
      allTotal: this.canaryMetric(series, latency, Stats.SUM, 'all'),
      allMax: this.canaryMetric(series, latency, Stats.MAXIMUM, 'all'),
      allMin: this.canaryMetric(series, latency, Stats.MINIMUM, 'all'),
    };
    const newMean = per('FILL(newTotal, 0)', NEW_CALLS);
    const oldMean = per('(FILL(allTotal, 0) - FILL(newTotal, 0))', OLD_CALLS);
    const spread = (mean: string) => `(FILL(allMax, 0) - ${mean}) * (${mean} - FILL(allMin, 0))`;
    const expression = compared({
      newMean,
      oldMean,
      variance: `${spread(newMean)} * ${inverse(NEW_CALLS)} + ${spread(oldMean)} * ${inverse(OLD_CALLS)}`,
      scale: 1,
    });
    return this.rollbackAlarm(
      `${name}NewVersion${latency}`,
      series.version,
      {
        means: `${name} (during a deployment, the canary) took at least ${margin} ms longer on average than the previous version, too much to be chance (z >= ${canaryVerdict.z}), in 2 minutes (with ${minCalls} calls or more).`,
        todo: `compare the versions' ${latency} on the dashboard; find the slow call in the new version's traces (X-Ray), fix and deploy again.`,
      },
      new MathExpression({
        expression,
        usingMetrics: metrics,
        label: `${latency}: new minus old version, ms`,
        period: metrics.newCalls.period,
      }),
      margin,
      { datapoints: 2 },
    );
  }

  /** Lambda's Errors of the new version invoked through the alias: crashes and timeouts, which emit no canary metric. */
  private crashAlarm(name: string, { fn, version }: Series): Alarm {
    const { periodSeconds } = rollbackAlarmEvaluation();
    // "ExecutedVersion … only applies to alias invocations" ("Using CloudWatch metrics with Lambda",
    // https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics.html).
    const metric = new Metric({
      namespace: 'AWS/Lambda',
      metricName: 'Errors',
      dimensionsMap: { FunctionName: fn.functionName, Resource: `${fn.functionName}:${LIVE_ALIAS}`, ExecutedVersion: version.version },
      statistic: Stats.SUM,
      period: Duration.seconds(periodSeconds),
    });
    return this.rollbackAlarm(
      `${name}NewVersionErrors`,
      version,
      {
        means: `${name} (during a deployment, the canary) crashed or timed out ${rollbackThresholds.serverErrorsPerMinute} time(s) or more in a minute.`,
        todo: `read the ${name} log group (level ERROR) of that version; fix and deploy again.`,
      },
      metric,
      rollbackThresholds.serverErrorsPerMinute,
    );
  }
}

const NEW_CALLS = 'FILL(newCalls, 0)';
/** The old version's calls: the function's across versions less the new one's. */
const OLD_CALLS = '(FILL(allCalls, 0) - FILL(newCalls, 0))';

/**
 * `total / calls`, with a divisor of 0 replaced by 1 (the total is 0 then): CloudWatch
 * drops a datapoint that divides by zero ("Metric math syntax and functions", basic
 * arithmetic, https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html),
 * and a dropped point is missing data to the alarm.
 */
function per(total: string, calls: string): string {
  return `(${total} / IF(${calls} > 0, ${calls}, 1))`;
}
const inverse = (calls: string) => per('1', calls);

/**
 * `scale × (newMean − oldMean)` where the new version had at least minCalls
 * calls and the old one any, and the difference is at least z standard errors
 * (`variance` is its variance under equal rates) — compared as squares, which
 * needs no square root: d ≥ 0 and d² ≥ z²·variance; else 0 (nothing to compare,
 * or chance).
 */
function compared(parts: { newMean: string; oldMean: string; variance: string; scale: number }): string {
  const d = `(${parts.newMean} - ${parts.oldMean})`;
  const z2 = Number((canaryVerdict.z * canaryVerdict.z).toFixed(4));
  const significant = `${d} > 0 AND ${d} * ${d} >= ${z2} * (${parts.variance})`;
  const value = parts.scale === 1 ? d : `${parts.scale} * ${d}`;
  return `IF(${NEW_CALLS} >= ${rollbackThresholds.minCalls} AND ${OLD_CALLS} > 0, IF(${significant}, ${value}, 0), 0)`;
}
