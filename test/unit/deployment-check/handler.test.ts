import type { AwsCalls } from '../../../functions/deployment-check/aws-calls';
import { checkSettingsFromEnvironment, createHandler } from '../../../functions/deployment-check/handler';
import type { Dependencies } from '../../../functions/runtime/dependencies';

/** The hook's report to CodeDeploy when it cannot even run (its passing runs: test/integration/deployment-check.test.ts). */
function fakeCalls(secret: () => Promise<string>) {
  const reports: unknown[][] = [];
  const calls: AwsCalls = {
    invoke: async () => {
      throw new Error('no version may be called when the check cannot run');
    },
    secretString: secret,
    reportHookStatus: async (...args) => {
      reports.push(args);
    },
  };
  return { calls, reports };
}

const event = { DeploymentId: 'd-ABCDEF123', LifecycleEventHookExecutionId: 'hook-execution-1' };
const settings = () => ({
  secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:check',
  meteringKey: 'm'.repeat(24),
  targets: {} as never,
});
const noDependencies = () => ({}) as Dependencies;

it('a secret it cannot read reports Failed to CodeDeploy, with the ids of the hook execution: a check that cannot run passes nothing', async () => {
  const { calls, reports } = fakeCalls(async () => {
    throw new Error('AccessDeniedException');
  });
  const report = await createHandler(calls, settings, noDependencies)(event);
  expect(report.passed).toBe(false);
  expect(report.findings[0]!.detail).toMatch(/AccessDeniedException/);
  expect(reports).toEqual([[event.DeploymentId, event.LifecycleEventHookExecutionId, 'Failed']]);
});

it('a malformed secret reports Failed too', async () => {
  const { calls, reports } = fakeCalls(async () => 'short');
  expect((await createHandler(calls, settings, noDependencies)(event)).passed).toBe(false);
  expect(reports).toEqual([[event.DeploymentId, event.LifecycleEventHookExecutionId, 'Failed']]);
});

it('settings missing from the environment report Failed', async () => {
  const { calls, reports } = fakeCalls(async () => 'a'.repeat(43));
  expect((await createHandler(calls, () => checkSettingsFromEnvironment({}), noDependencies)(event)).passed).toBe(false);
  expect(reports).toHaveLength(1);
});
