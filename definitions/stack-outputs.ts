import type { PlanName } from './plans';
import type { TableName } from './tables';

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * The output names (OutputKey) of a stage's CloudFormation stack: the CDK stack
 * (lib/petstore-stack.ts) creates them and the key tool (admin/targets/aws.ts)
 * finds the tables and usage plans of a stage by them, so both spell them from
 * here. Operators and scripts read them too: renaming one breaks them.
 */
export const stackOutputNames = {
  /** Base URL of the API, ending in /v1. */
  apiUrl: 'ApiUrl',
  executeApiUrl: 'ExecuteApiUrl',
  customDomainTarget: 'CustomDomainTarget',
  customDomainHostedZoneId: 'CustomDomainHostedZoneId',
  restApiId: 'RestApiId',
  alarmTopicArn: 'AlarmTopicArn',
  dashboardName: 'DashboardName',
  dashboardUrl: 'DashboardUrl',
  webAclArn: 'WebAclArn',
  accessLogGroupName: 'AccessLogGroupName',
  executionLogGroupName: 'ExecutionLogGroupName',
  deploymentApplicationName: 'DeploymentApplicationName',
  /** Absent from a stack deployed before pooled metering. */
  meteringKeysPerPlan: 'MeteringKeysPerPlan',
  /** The log group of a function, by its operationId or `authorizer`. */
  functionLogGroup: (functionName: string) => `${pascal(functionName)}LogGroupName`,
  table: (name: TableName) => `${pascal(name)}TableName`,
  usagePlan: (plan: PlanName) => `${pascal(plan)}UsagePlanId`,
} as const;
