import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  type ILambdaDeploymentConfig,
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
  TrafficRouting,
} from 'aws-cdk-lib/aws-codedeploy';
import { Alias, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { canary, type Rollout, rollbackAlarmEvaluation } from '../stage-config';

/** The alias API Gateway invokes. */
export const LIVE_ALIAS = 'live';

export interface FunctionRolloutProps {
  applicationName: string;
  rollout: Rollout;
  /** Prefix of the rollback alarms' names (the stack name). */
  alarmNamePrefix: string;
  /** p99 Duration of a new version, in ms, at or above which its deployment rolls back. */
  durationP99Ms: number;
  /** Errors of a new version per minute at or above which its deployment rolls back. */
  errorsPerMinute: number;
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
 * It rolls back when one of the group's alarms goes to ALARM during the
 * deployment, whatever made it fire ("Monitoring deployments with CloudWatch
 * alarms in CodeDeploy",
 * https://docs.aws.amazon.com/codedeploy/latest/userguide/monitoring-create-alarms.html).
 * So the group watches only alarms on the new version itself: Lambda's Errors
 * and Duration with the dimensions FunctionName, Resource (function:alias) and
 * ExecutedVersion (the version that ran a request invoked through the alias:
 * "ExecutedVersion … only applies to alias invocations", "Using CloudWatch
 * metrics with Lambda", https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics.html;
 * Errors and Duration: "Types of metrics for Lambda functions",
 * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html).
 * A stage-wide alarm (5xx rate, latency) firing for another reason, a
 * DynamoDB incident say, notifies but cannot roll back the fix for it.
 * Their 1-minute periods fit in the canary's interval (rollbackAlarmEvaluation):
 * a bad version is caught while it takes only the canary's share.
 */
export class FunctionRollout extends Construct {
  readonly application: LambdaApplication;
  readonly groups: LambdaDeploymentGroup[] = [];
  /** The alarms the deployment groups roll back on, all on a new version's own metrics. */
  readonly rollbackAlarms: Alarm[] = [];
  readonly deploymentConfig: ILambdaDeploymentConfig;

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

  /** The rollback alarms notify the stage's alarm topic too: a rollback is news. */
  notify(topic: ITopic): void {
    const action = new SnsAction(topic);
    for (const alarm of this.rollbackAlarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }

  /**
   * The alias of `fn`'s current version, moved by its deployment group, which
   * rolls back on the new version's errors (unless `countsErrors` is false: the
   * authorizer refuses keys by throwing, which Lambda counts as errors) and
   * p99 duration.
   */
  liveAlias(name: string, fn: LambdaFunction, options: { countsErrors?: boolean } = {}): Alias {
    const version = fn.currentVersion;
    const alias = new Alias(fn, 'LiveAlias', { aliasName: LIVE_ALIAS, version });
    const { periodSeconds, evaluationPeriods } = rollbackAlarmEvaluation();
    const metric = (metricName: string, statistic: string) =>
      new Metric({
        namespace: 'AWS/Lambda',
        metricName,
        dimensionsMap: { FunctionName: fn.functionName, Resource: `${fn.functionName}:${LIVE_ALIAS}`, ExecutedVersion: version.version },
        statistic,
        period: Duration.seconds(periodSeconds),
      });
    const alarms: Alarm[] = [];
    if (options.countsErrors !== false) {
      alarms.push(
        new Alarm(this, `${name}NewVersionErrors`, {
          alarmName: `${this.props.alarmNamePrefix}-${name}NewVersionErrors`,
          alarmDescription: `Means: the newest version of ${name} (during a deployment, the canary) crashed or timed out ${this.props.errorsPerMinute} time(s) or more in a minute. During a deployment CodeDeploy then moves the live alias back to the previous version; at other times this only notifies. Do: read the ${name} log group (level ERROR) of that version; fix and deploy again. Stage-wide alarms never roll back.`,
          metric: metric('Errors', Stats.SUM),
          threshold: this.props.errorsPerMinute,
          evaluationPeriods,
          datapointsToAlarm: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    alarms.push(
      new Alarm(this, `${name}NewVersionDuration`, {
        alarmName: `${this.props.alarmNamePrefix}-${name}NewVersionDuration`,
        alarmDescription: `Means: the newest version of ${name} (during a deployment, the canary) took ${this.props.durationP99Ms} ms or more at p99 in 2 of ${evaluationPeriods} minutes. During a deployment CodeDeploy then moves the live alias back to the previous version; at other times this only notifies. Do: compare its Duration with the previous version's on the dashboard; find the slow call in its traces (X-Ray), fix and deploy again.`,
        metric: metric('Duration', Stats.p(99)),
        threshold: this.props.durationP99Ms,
        evaluationPeriods,
        datapointsToAlarm: Math.min(2, evaluationPeriods),
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    // The alarms follow the new version before CodeDeploy starts moving the alias to it.
    for (const alarm of alarms) alias.node.addDependency(alarm);
    this.rollbackAlarms.push(...alarms);
    const group = new LambdaDeploymentGroup(this, `${name}Deployment`, {
      application: this.application,
      alias,
      deploymentConfig: this.deploymentConfig,
      alarms,
    });
    Validations.of(group).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's service role for Lambda deployments; AWS's managed policy is the documented one and is limited to shifting aliases of Lambda functions.",
    });
    this.groups.push(group);
    return alias;
  }
}
