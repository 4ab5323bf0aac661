/**
 * Resizing the metering pool (meteringKeysPerPlan) must never make a working
 * key answer 401. API Gateway caches the authorizer's answer, and with it the
 * pooled key it names as usageIdentifierKey, for the authorizer's TTL; a
 * usageIdentifierKey that is no enabled API key of a usage plan of the stage
 * is refused. Each deployment is played on the faked control plane in the
 * worst order CloudFormation may take: the new authorizer answers from the
 * start, new pooled keys exist only once created, removed ones go at the
 * cleanup at the end, and answers the old authorizer gave stay cached for the
 * TTL after that. The two-step procedure of docs/operators.md holds; the
 * one-step change the procedure forbids is shown to fail.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { meteringPoolEnvironment, type PooledPlan, pooledKeyName, pooledMeteringKey } from '../../definitions/metering-pool';
import { generateApiKey } from '../../functions/customers';
import { usageIdentifierKeyOf } from '../../functions/domain/metering';
import { PetStoreStack } from '../../lib/petstore-stack';
import { projectRoot } from '../../lib/project-root';
import { pooledKeysKept, type StageConfig, stageConfigFromContext, stages } from '../../lib/stage-config';
import { creationChain } from '../support/creation-chain';
import { FakeApiGateway } from '../support/fake-api-gateway';

const REST_API_ID = 'a1b2c3d4e5';
const PREFIX = '0f3e4c1a11114b5c9d8e7f6a5b4c3d2e';
const PLAN: PooledPlan = 'free';
const PLAN_ID = 'upfree01';

/** What a deployment of a stage config puts in place for the pool: the authorizer's pool size and the keys the stack keeps. */
interface PoolShape {
  keysPerPlan: number;
  kept: number;
}
const shapeOf = (config: StageConfig): PoolShape => ({ keysPerPlan: config.meteringKeysPerPlan, kept: pooledKeysKept(config) });
const withPool = (keysPerPlan: number, kept?: number): StageConfig => ({
  ...stages.staging,
  meteringKeysPerPlan: keysPerPlan,
  ...(kept !== undefined ? { meteringKeysKeptPerPlan: kept } : {}),
});

describe('the stack keeps the pooled keys of a resize and the authorizer hashes onto meteringKeysPerPlan', () => {
  let outdir: string;
  let template: Template;
  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-pool-resize-'));
    const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
    const app = new App({ outdir, context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
    template = Template.fromStack(new PetStoreStack(app, 'PoolResize', { config: withPool(5, 10) }));
  });
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

  it('keeps 10 pooled keys per plan in its usage plan while the authorizer names 5 of them', () => {
    const names = Object.values(template.findResources('AWS::ApiGateway::ApiKey')).map((key) => key.Properties.Name as string);
    expect(names.filter((name) => name.startsWith(`petstore-staging-${PLAN}-pool-`)).sort()).toEqual(
      Array.from({ length: 10 }, (_, slot) => pooledKeyName('staging', PLAN, slot)).sort(),
    );
    const authorizers = Object.values(template.findResources('AWS::Lambda::Function')).filter(
      (fn) => fn.Properties.Environment?.Variables?.[meteringPoolEnvironment.keysPerPlan] !== undefined,
    );
    expect(authorizers.map((fn) => fn.Properties.Environment.Variables[meteringPoolEnvironment.keysPerPlan])).toEqual(['5']);
  });

  it('refuses to synthesize a stage that keeps fewer keys than its authorizer names', () => {
    expect(() => pooledKeysKept(withPool(10, 5))).toThrow(
      /meteringKeysKeptPerPlan \(5\) must be a whole number of at least meteringKeysPerPlan \(10\)/,
    );
    expect(() => stageConfigFromContext('staging', () => undefined)).not.toThrow();
  });
});

describe('a resize appends its keys to the creation chains: no two usage-plan keys or API keys are created at once', () => {
  // AWS Support in serverless/serverless#12065 (https://github.com/serverless/serverless/issues/12065):
  // "CreateUsagePlanKey API call can run only one at a time in an AWS region … use the DependsOn attribute".
  let outdir: string;
  const templates: Record<string, Record<string, { Type: string; DependsOn?: string | string[] }>> = {};
  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-pool-chain-'));
    const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
    // The same stack id, so the logical ids compare across the deployments of a grow: 10, then keep 20.
    for (const [name, config] of [
      ['before', withPool(10)],
      ['during', withPool(10, 20)],
    ] as const) {
      const app = new App({ outdir: path.join(outdir, name), context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
      templates[name] = Template.fromStack(new PetStoreStack(app, 'PoolChain', { config })).toJSON().Resources;
    }
  });
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

  it.each(['AWS::ApiGateway::UsagePlanKey', 'AWS::ApiGateway::ApiKey'])(
    '%s: the new ones follow the existing ones, whose links stay as they were',
    (type) => {
      const before = creationChain(templates.before!, type);
      const during = creationChain(templates.during!, type);
      // The deployment check's key and 10 slots of 3 plans, then 10 more slots.
      expect(before).toHaveLength(1 + 10 * 3);
      expect(during).toHaveLength(1 + 20 * 3);
      expect(during.slice(0, before.length)).toEqual(before);
      for (const id of before) expect(templates.during![id]!.DependsOn).toEqual(templates.before![id]!.DependsOn);
    },
  );
});

describe('deployments of a pool resize, on the faked control plane with cached authorizer answers', () => {
  /** 400 customers of the plan: every slot of every pool size here carries some. */
  const customers = Array.from(
    { length: 400 },
    (_, i) => generateApiKey({ plan: PLAN, owner: `Customer ${i}`, now: Date.parse('2030-01-01T00:00:00Z') }).record,
  );
  const answersOf = (keysPerPlan: number) => customers.map((record) => usageIdentifierKeyOf(record, { prefix: PREFIX, keysPerPlan }));

  let gateway: FakeApiGateway;
  beforeEach(() => {
    gateway = new FakeApiGateway(new APIGatewayClient({ region: 'eu-west-1' }));
    gateway.addStackPlan(PLAN_ID, `petstore-staging-${PLAN}`, REST_API_ID, 'v1');
  });
  afterEach(() => gateway.mock.restore());

  const keep = (kept: number) => {
    for (let slot = 0; slot < kept; slot++) {
      if (!gateway.keyNamed(pooledKeyName('staging', PLAN, slot)))
        gateway.addKey(pooledKeyName('staging', PLAN, slot), pooledMeteringKey(PREFIX, PLAN, slot), PLAN_ID);
    }
    for (const key of [...gateway.apiKeys.values()]) {
      const slot = Number(/-pool-(\d+)$/.exec(key.name)?.[1]);
      if (slot >= kept) gateway.apiKeys.delete(key.id);
    }
  };
  /** Answers (cached or fresh) that API Gateway would refuse now: each one is a working key answering 401. */
  const refused = (answers: string[]) => answers.filter((value) => !gateway.meters(value, REST_API_ID, 'v1')).length;

  /** Deploys `to` over `from` in the worst order; returns how many answers were refused at any moment. */
  function deploy(from: PoolShape, to: PoolShape): number {
    const cached = answersOf(from.keysPerPlan);
    const fresh = answersOf(to.keysPerPlan);
    // The new authorizer may answer before CloudFormation has created its keys.
    let refusals = refused([...cached, ...fresh]);
    keep(Math.max(from.kept, to.kept));
    refusals += refused([...cached, ...fresh]);
    // Cleanup deletes what `to` no longer keeps; the old answers are still cached for the TTL.
    keep(to.kept);
    refusals += refused([...cached, ...fresh]);
    return refusals;
  }
  function run(sequence: StageConfig[]): number {
    keep(shapeOf(sequence[0]!).kept);
    let refusals = refused(answersOf(sequence[0]!.meteringKeysPerPlan));
    for (let step = 1; step < sequence.length; step++) refusals += deploy(shapeOf(sequence[step - 1]!), shapeOf(sequence[step]!));
    return refusals;
  }

  it('growing 10 → 20 in two deployments (keep 20, then switch the authorizer): no answer refused', () => {
    expect(run([withPool(10), withPool(10, 20), withPool(20)])).toBe(0);
  });

  it('shrinking 10 → 5 in two deployments (switch the authorizer keeping 10, then drop 5 after the TTL): no answer refused', () => {
    expect(run([withPool(10), withPool(5, 10), withPool(5)])).toBe(0);
  });

  it('in one deployment either way, answers are refused: the race and the deleted keys the procedure avoids', () => {
    expect(run([withPool(10), withPool(20)])).toBeGreaterThan(0);
    expect(run([withPool(10), withPool(5)])).toBeGreaterThan(0);
  });
});
