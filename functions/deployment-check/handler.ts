import { deploymentCheckEnvironment } from '../../definitions/deployment-check';
import { CustomerTable } from '../customers';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';
import { logger } from '../runtime/logger';
import { type AwsCalls, awsCallsFromEnvironment } from './aws-calls';
import { type CheckReport, type CheckTargets, runDeploymentCheck } from './check';
import { checkKeyFromSecret, ensureCheckKey } from './check-key';

/** What CodeDeploy passes a lifecycle hook ("AppSpec 'hooks' section for an AWS Lambda deployment"). */
export interface LifecycleHookEvent {
  DeploymentId: string;
  LifecycleEventHookExecutionId: string;
}

export interface CheckSettings {
  secretArn: string;
  meteringKey: string;
  targets: CheckTargets;
}

export function checkSettingsFromEnvironment(env: NodeJS.ProcessEnv = process.env): CheckSettings {
  const secretArn = env[deploymentCheckEnvironment.secretArn];
  const meteringKey = env[deploymentCheckEnvironment.meteringKey];
  const targets = env[deploymentCheckEnvironment.targets];
  if (!secretArn || !meteringKey || !targets) throw new Error('The deployment check needs its secret, metering key and targets.');
  return { secretArn, meteringKey, targets: JSON.parse(targets) as CheckTargets };
}

/**
 * The BeforeAllowTraffic hook of every function's deployment group: CodeDeploy
 * calls it after the new version is published and before the live alias sends
 * it any traffic, and waits for its verdict ("AppSpec 'hooks' section", Lambda:
 * BeforeAllowTraffic, https://docs.aws.amazon.com/codedeploy/latest/userguide/reference-appspec-file-structure-hooks.html#appspec-hooks-lambda).
 * It exercises every new version (so the canary metrics have data even in a
 * quiet hour) and reports Failed, which stops and rolls back the deployment,
 * unless every call answered as it should or failed only as the live version does.
 * Any error of its own reports Failed too: a check that cannot run passes nothing.
 */
export function createHandler(calls: AwsCalls, settings: () => CheckSettings, dependencies: () => Dependencies) {
  return async (event: LifecycleHookEvent): Promise<CheckReport> => {
    let report: CheckReport;
    try {
      const { secretArn, meteringKey, targets } = settings();
      const deps = dependencies();
      const key = checkKeyFromSecret(await calls.secretString(secretArn));
      const keyContext = await ensureCheckKey(new CustomerTable(deps.db, deps.tableNames), key, meteringKey, deps.clock());
      report = await runDeploymentCheck(calls.invoke, targets, key, keyContext);
    } catch (error) {
      report = { passed: false, findings: [{ target: 'deployment check', verdict: 'failed', detail: `could not run: ${String(error)}` }] };
    }
    logger[report.passed ? 'info' : 'error']('deployment check', { deploymentId: event.DeploymentId, ...report });
    await calls.reportHookStatus(event.DeploymentId, event.LifecycleEventHookExecutionId, report.passed ? 'Succeeded' : 'Failed');
    return report;
  };
}

export const handler = createHandler(awsCallsFromEnvironment(), checkSettingsFromEnvironment, dependenciesFromEnvironment);
