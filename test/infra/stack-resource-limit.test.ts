/**
 * CloudFormation refuses a stack of more than 500 resources ("CloudFormation
 * quotas", https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html),
 * and the metering pool is what grows a stack: each key per plan is an API key
 * and a usage-plan key for every fixed plan. Synth refuses a pool past the
 * limit with one line naming the pool, the count and the limit, before any
 * deployment starts (lib/petstore-stack.ts, refusePastResourceLimit).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { plans } from '../../definitions/plans';
import { PetStoreStack } from '../../lib/petstore-stack';
import { projectRoot } from '../../lib/project-root';
import { CLOUDFORMATION_RESOURCES_PER_STACK, type StageConfig, stageNames, stages } from '../../lib/stage-config';

const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
const fixedPlans = Object.values(plans).filter(({ limits }) => limits !== 'custom').length;

let outdir: string;
beforeAll(() => {
  outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-resource-limit-'));
});
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

/** The stage's template with `keysPerPlan` metering keys per plan (only the template matters: no bundling). */
function resourcesWith(config: StageConfig, keysPerPlan: number): number {
  const app = new App({ outdir: fs.mkdtempSync(path.join(outdir, 'app-')), context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  const stack = new PetStoreStack(app, config.stackName, { config: { ...config, meteringKeysPerPlan: keysPerPlan } });
  return Object.keys(Template.fromStack(stack).toJSON().Resources).length;
}

describe.each(stageNames)('%s', (stage) => {
  const config = stages[stage];
  let ceiling: number;
  beforeAll(() => {
    const today = resourcesWith(config, config.meteringKeysPerPlan);
    ceiling = config.meteringKeysPerPlan + Math.floor((CLOUDFORMATION_RESOURCES_PER_STACK - today) / (2 * fixedPlans));
  }, 60_000);

  it('today’s pool leaves room to grow, and a pool at the ceiling synthesizes within the limit', () => {
    expect(ceiling).toBeGreaterThan(config.meteringKeysPerPlan);
    expect(resourcesWith(config, ceiling)).toBeLessThanOrEqual(CLOUDFORMATION_RESOURCES_PER_STACK);
  }, 60_000);

  it('one key per plan past the ceiling: synth refuses, in one line naming the pool, the count, the limit and what fits', () => {
    let message = '';
    try {
      resourcesWith(config, ceiling + 1);
    } catch (error) {
      message = (error as Error).message;
    }
    const lines = message.split('\n').filter((line) => line.includes('metering pool'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `${config.stackName}: a metering pool of ${ceiling + 1} keys per plan makes \\d+ resources, past CloudFormation's limit of 500 per stack; at most ${ceiling} keys per plan fit`,
      ),
    );
    const count = Number(/makes (\d+) resources/.exec(lines[0]!)?.[1]);
    expect(count).toBeGreaterThan(CLOUDFORMATION_RESOURCES_PER_STACK);
    expect(count).toBeLessThanOrEqual(CLOUDFORMATION_RESOURCES_PER_STACK + 2 * fixedPlans);
  }, 60_000);
});
