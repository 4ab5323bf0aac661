import { Validations } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { type ILambdaDeploymentConfig, LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Alias, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { Rollout } from '../stage-config';

/** The alias API Gateway invokes. */
export const LIVE_ALIAS = 'live';

/**
 * Each function published as a version behind the `live` alias, which API
 * Gateway invokes, and a CodeDeploy deployment group that moves the alias on
 * each deployment. In a `canary` stage CodeDeploy sends 10 % of the traffic
 * to the new version for 5 minutes, then all of it; if the stage's 5xx-rate or
 * latency alarm fires meanwhile, it moves the alias back to the previous
 * version. In an `allAtOnce` stage (staging) it moves the alias at once, so
 * staging rehearses the same mechanism without the wait ("Working with
 * deployment configurations in CodeDeploy",
 * https://docs.aws.amazon.com/codedeploy/latest/userguide/deployment-configurations.html).
 */
export class FunctionRollout extends Construct {
  readonly application: LambdaApplication;
  readonly groups: LambdaDeploymentGroup[] = [];
  private readonly deploymentConfig: ILambdaDeploymentConfig;

  constructor(scope: Construct, id: string, props: { applicationName: string; rollout: Rollout }) {
    super(scope, id);
    this.application = new LambdaApplication(this, 'Application', { applicationName: props.applicationName });
    this.deploymentConfig =
      props.rollout === 'canary' ? LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES : LambdaDeploymentConfig.ALL_AT_ONCE;
  }

  /** The alias of `fn`'s current version, moved by its deployment group. */
  liveAlias(name: string, fn: LambdaFunction): Alias {
    const alias = new Alias(fn, 'LiveAlias', { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    const group = new LambdaDeploymentGroup(this, `${name}Deployment`, {
      application: this.application,
      alias,
      deploymentConfig: this.deploymentConfig,
      // Alarms are added once they exist (they watch the API that invokes the alias).
    });
    Validations.of(group).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's service role for Lambda deployments; AWS's managed policy is the documented one and is limited to shifting aliases of Lambda functions.",
    });
    this.groups.push(group);
    return alias;
  }

  /** Rolls back every deployment group when one of these alarms fires during its deployment. */
  rollBackOn(alarms: IAlarm[]): void {
    for (const group of this.groups) for (const alarm of alarms) group.addAlarm(alarm);
  }
}
