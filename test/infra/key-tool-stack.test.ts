/**
 * The key tool (admin/) never imports the CDK code, so it repeats the stack
 * names and reads the stack outputs by name: these tests keep both in step
 * with what lib/ really deploys.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { deployedStages, stackNames } from '../../admin/stages';
import { describeDeployment } from '../../admin/targets/aws';
import { addPetStoreStacks } from '../../lib/petstore-app';
import { projectRoot } from '../../lib/project-root';
import { stageNames, stages, type StageName } from '../../lib/stage-config';

const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
let outdir: string;
const outputs = {} as Record<StageName, Record<string, { Value: unknown }>>;

beforeAll(() => {
  outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-key-tool-cdk-'));
  // Only the outputs matter here: skip bundling the functions.
  const app = new App({ outdir, context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  const stacks = addPetStoreStacks(app);
  for (const stage of stageNames) outputs[stage] = (Template.fromStack(stacks[stage]).toJSON() as { Outputs: typeof outputs[StageName] }).Outputs;
});
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

it('knows the same stages and stack names as lib/stage-config.ts', () => {
  expect([...deployedStages].sort()).toEqual([...stageNames].sort());
  for (const stage of stageNames) expect(stackNames[stage]).toBe(stages[stage].stackName);
});

it.each([...deployedStages])('finds every id it needs among the outputs of the %s stack', async (stage) => {
  // CloudFormation answers with the synthesized outputs, each value standing in for its resolved id.
  const cloudFormation = new CloudFormationClient({ region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' } });
  const mock = mockClient(cloudFormation);
  mock.on(DescribeStacksCommand, { StackName: stages[stage].stackName }).resolves({
    Stacks: [
      {
        StackName: stages[stage].stackName,
        StackStatus: 'CREATE_COMPLETE',
        CreationTime: new Date(),
        Outputs: Object.entries(outputs[stage]).map(([key, output]) => ({ OutputKey: key, OutputValue: `resolved:${JSON.stringify(output.Value)}` })),
      },
    ],
  });
  const deployment = await describeDeployment(cloudFormation, stage);
  const resolved = (key: string) => `resolved:${JSON.stringify(outputs[stage][key]!.Value)}`;
  expect(deployment).toEqual({
    stage,
    stackName: stages[stage].stackName,
    restApiId: resolved('RestApiId'),
    usagePlanIds: { free: resolved('FreeUsagePlanId'), pro: resolved('ProUsagePlanId'), business: resolved('BusinessUsagePlanId') },
    tableNames: { apiKeys: resolved('ApiKeysTableName'), rateLimits: resolved('RateLimitsTableName') },
  });
  mock.restore();
  cloudFormation.destroy();
});
