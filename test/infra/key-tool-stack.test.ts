/**
 * The key tool (admin/) never imports the CDK code, so it repeats the stack
 * names and reads the stack outputs by name: these tests keep both in step
 * with what lib/ really deploys.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { describeDeployment } from '../../admin/targets/aws';
import { deployedStages, stackNames } from '../../definitions/stages';
import { addPetStoreStacks } from '../../lib/petstore-app';
import { projectRoot } from '../../lib/project-root';
import { type StageName, stageNames } from '../../lib/stage-config';

const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
let outdir: string;
const outputs = {} as Record<StageName, Record<string, { Value: unknown }>>;
/** The stacks the CDK app really synthesizes, by stage, and every stack name in the app. */
const synthesizedStackNames = {} as Record<StageName, string>;
let allStackNames: string[];

beforeAll(() => {
  outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-key-tool-cdk-'));
  // Only the outputs matter here: skip bundling the functions.
  const app = new App({ outdir, context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  const stacks = addPetStoreStacks(app);
  for (const stage of stageNames) {
    outputs[stage] = (Template.fromStack(stacks[stage]).toJSON() as { Outputs: (typeof outputs)[StageName] }).Outputs;
    synthesizedStackNames[stage] = stacks[stage].stackName;
  }
  allStackNames = app.node.children.filter(Stack.isStack).map((stack) => stack.stackName);
});
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

it('looks for exactly the stacks the CDK app synthesizes, under the names it gives them', () => {
  expect(Object.values(stackNames).sort()).toEqual([...allStackNames].sort());
  for (const stage of deployedStages) expect(stackNames[stage]).toBe(synthesizedStackNames[stage]);
});

it.each([...deployedStages])('finds every id it needs among the outputs of the %s stack', async (stage) => {
  // CloudFormation answers with the synthesized outputs, each value standing in for its resolved id.
  const cloudFormation = new CloudFormationClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' },
  });
  const mock = mockClient(cloudFormation);
  // Only the stack the app synthesized answers: the tool must ask for that one.
  mock.on(DescribeStacksCommand, { StackName: synthesizedStackNames[stage] }).resolves({
    Stacks: [
      {
        StackName: synthesizedStackNames[stage],
        StackStatus: 'CREATE_COMPLETE',
        CreationTime: new Date(),
        Outputs: Object.entries(outputs[stage]).map(([key, output]) => ({
          OutputKey: key,
          OutputValue: `resolved:${JSON.stringify(output.Value)}`,
        })),
      },
    ],
  });
  const deployment = await describeDeployment(cloudFormation, stage);
  const resolved = (key: string) => `resolved:${JSON.stringify(outputs[stage][key]!.Value)}`;
  expect(deployment).toEqual({
    stage,
    stackName: synthesizedStackNames[stage],
    restApiId: resolved('RestApiId'),
    usagePlanIds: { free: resolved('FreeUsagePlanId'), pro: resolved('ProUsagePlanId'), business: resolved('BusinessUsagePlanId') },
    tableNames: { apiKeys: resolved('ApiKeysTableName'), rateLimits: resolved('RateLimitsTableName') },
    // Parsed as a number from the real output, a plain string in the template.
    meteringKeysPerPlan: expect.anything(),
  });
  expect(outputs[stage].MeteringKeysPerPlan!.Value).toMatch(/^[1-9]\d*$/);
  mock.restore();
  cloudFormation.destroy();
});
