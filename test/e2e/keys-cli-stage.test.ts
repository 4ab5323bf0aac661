/**
 * The real key tool against a deployed stage, as an operator runs it from a
 * fresh clone: `npx petstore-keys … --stage staging` in a child process, with
 * nothing but environment variables pointing its AWS SDK at an emulated
 * control plane. CloudFormation answers DescribeStacks with the outputs a
 * deployment of the stack has (test/support/fake-control-plane-server.ts),
 * API Gateway's keys and usage plans are the faked control plane served over
 * HTTP, DynamoDB is DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB). Only what
 * npm installs is needed: no emulator from outside the project.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type PooledPlan, pooledKeyName, pooledMeteringKey } from '../../definitions/metering-pool';
import { type PlanName, planNames, plans } from '../../definitions/plans';
import { stackOutputNames } from '../../definitions/stack-outputs';
import { stackNames } from '../../definitions/stages';
import type { TableName } from '../../definitions/tables';
import { type ApiKeyRecord, CustomerTable } from '../../functions/customers';
import { usageIdentifierKeyOf } from '../../functions/domain/metering';
import { projectRoot } from '../../lib/project-root';
import { createTestTables, testDocumentClient, testEndpoint } from '../support/dynamo';
import { FakeApiGateway } from '../support/fake-api-gateway';
import { type FakeControlPlane, startFakeControlPlane } from '../support/fake-control-plane-server';

const run = promisify(execFile);
const REST_API_ID = 'a1b2c3d4e5';
const REGION = 'eu-west-1';
const pool = { prefix: '0f3e4c1a11114b5c9d8e7f6a5b4c3d2e', keysPerPlan: 10 };
const pooledPlans = planNames.filter((plan) => plans[plan].limits !== 'custom') as PooledPlan[];
const usagePlanIds: Partial<Record<PlanName, string>> = { free: 'upfree01', pro: 'uppro001', business: 'upbus001' };

let tableNames: Record<TableName, string>;
let gateway: FakeApiGateway;
let controlPlane: FakeControlPlane;
let keysTable: CustomerTable;

/** The outputs of a deployed PetStore-Staging, under the names the stack gives them. */
function stackOutputs(): Record<string, string> {
  const outputs: Record<string, string> = {
    [stackOutputNames.apiUrl]: `https://${REST_API_ID}.execute-api.${REGION}.amazonaws.com/v1`,
    [stackOutputNames.restApiId]: REST_API_ID,
    [stackOutputNames.meteringKeysPerPlan]: String(pool.keysPerPlan),
  };
  for (const [name, table] of Object.entries(tableNames)) outputs[stackOutputNames.table(name as TableName)] = table;
  for (const [plan, id] of Object.entries(usagePlanIds)) outputs[stackOutputNames.usagePlan(plan as PlanName)] = id;
  return outputs;
}

beforeAll(async () => {
  tableNames = await createTestTables();
  keysTable = new CustomerTable(testDocumentClient(), tableNames);
  gateway = new FakeApiGateway();
  for (const [plan, id] of Object.entries(usagePlanIds)) gateway.addStackPlan(id, `petstore-staging-${plan}`, REST_API_ID, 'v1');
  for (const plan of pooledPlans) {
    for (let slot = 0; slot < pool.keysPerPlan; slot++)
      gateway.addKey(pooledKeyName('staging', plan, slot), pooledMeteringKey(pool.prefix, plan, slot), usagePlanIds[plan]!);
  }
  controlPlane = await startFakeControlPlane(gateway, [{ name: stackNames.staging, status: 'UPDATE_COMPLETE', outputs: stackOutputs() }]);
});

afterAll(async () => {
  gateway.mock.restore();
  await controlPlane.close();
});

/** `npx petstore-keys <args> --stage <stage>`, as a shell would run it; never throws: the exit code is part of the answer. */
const petstoreKeys = (...args: string[]) => petstoreKeysOn('staging', ...args);

async function petstoreKeysOn(stage: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ENDPOINT_URL: controlPlane.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: testEndpoint(),
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'not-a-secret',
  };
  for (const name of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_DEFAULT_REGION']) delete env[name];
  try {
    const { stdout, stderr } = await run('npx', ['petstore-keys', ...args, '--stage', stage], { cwd: projectRoot, env });
    return { code: 0, stdout, stderr: withoutNpmNoise(stderr) };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: withoutNpmNoise(failed.stderr) };
  }
}

/** npm's own warnings (e.g. the engine check of a system npm) are not the tool's output. */
const withoutNpmNoise = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => !line.startsWith('npm warn'))
    .join('\n');

const metered = (record: ApiKeyRecord) => gateway.meters(usageIdentifierKeyOf(record, pool), REST_API_ID, 'v1');
const issued = (stdout: string) => /Issued (key_\w+)/.exec(stdout)?.[1] ?? (JSON.parse(stdout) as { keyId: string }).keyId;

it('issue, set-plan both ways, rotate, revoke, list and release-metering work on the stage', async () => {
  const pro = await petstoreKeys('issue', '--plan', 'pro', '--owner', 'Acme Ltd');
  expect(pro).toMatchObject({ code: 0, stderr: '' });
  expect(pro.stdout).toContain('in staging (PetStore-Staging)');
  const proKey = (await keysTable.findById(issued(pro.stdout)))!;
  expect(metered(proKey)).toBe(true);

  const enterprise = await petstoreKeys(
    'issue',
    '--plan',
    'enterprise',
    '--owner',
    'Umbrella',
    '--per-minute',
    '600',
    '--per-day',
    '50000',
    '--json',
  );
  expect(enterprise).toMatchObject({ code: 0, stderr: '' });
  const enterpriseKey = (await keysTable.findById(issued(enterprise.stdout)))!;
  expect(gateway.planNamed(`petstore-staging-enterprise-${enterpriseKey.keyId}`)).toBeDefined();
  expect(metered(enterpriseKey)).toBe(true);

  // Pro → Enterprise, then back: both answers stay metered (the move off Enterprise is released later).
  expect((await petstoreKeys('set-plan', proKey.keyId, 'enterprise', '--per-minute', '900', '--per-day', '90000')).code).toBe(0);
  const upgraded = (await keysTable.findById(proKey.keyId))!;
  expect(upgraded.plan).toBe('enterprise');
  expect([metered(proKey), metered(upgraded)]).toEqual([true, true]);
  expect((await petstoreKeys('set-plan', proKey.keyId, 'pro')).code).toBe(0);
  const downgraded = (await keysTable.findById(proKey.keyId))!;
  expect([metered(upgraded), metered(downgraded)]).toEqual([true, true]);
  const early = await petstoreKeys('release-metering');
  expect(early).toMatchObject({ code: 0, stderr: '' });
  expect(early.stdout).toContain('0 API key(s) released; 1 still named by cached authorizer answers: run again after');

  const rotated = await petstoreKeys('rotate', enterpriseKey.keyId, '--grace', '0', '--json');
  expect(rotated).toMatchObject({ code: 0, stderr: '' });
  const successor = (await keysTable.findById(issued(rotated.stdout)))!;
  // The successor is metered by its customer's own API key, which the rotation kept.
  expect(usageIdentifierKeyOf(successor, pool)).toBe(usageIdentifierKeyOf(enterpriseKey, pool));
  expect(metered(successor)).toBe(true);

  // The old secret's grace (0) is over: revoking the successor leaves the customer no working key, so its metering goes.
  const revoked = await petstoreKeys('revoke', successor.keyId);
  expect(revoked).toMatchObject({ code: 0, stderr: '' });
  expect(revoked.stdout).toContain(`Revoked ${successor.keyId}`);
  expect(gateway.keyNamed(`petstore-staging-${enterpriseKey.customerId}`)).toBeUndefined();
  expect(gateway.planNamed(`petstore-staging-enterprise-${enterpriseKey.customerId}`)).toBeUndefined();

  const listed = await petstoreKeys('list', '--json');
  expect(listed.code).toBe(0);
  const statuses = Object.fromEntries(
    (JSON.parse(listed.stdout) as { keyId: string; status: string }[]).map((key) => [key.keyId, key.status]),
  );
  expect(statuses).toEqual({ [proKey.keyId]: 'active', [enterpriseKey.keyId]: 'expired', [successor.keyId]: 'revoked' });

  // The downgraded key's own API key goes after the cache TTL.
  const released = await petstoreKeys('release-metering');
  // The downgraded key moved moments ago: the authorizer may still have its Enterprise answer cached.
  expect(released.stdout).toMatch(/1 still named by cached authorizer answers: run again after \S+Z\./);
  expect(metered(upgraded)).toBe(true);
}, 300_000);

it('a stage whose stack is not deployed is one line naming the stack and its region, exit code 1', async () => {
  const missing = await petstoreKeysOn('production', 'list');
  expect(missing).toMatchObject({ code: 1, stdout: '' });
  expect(missing.stderr).toMatch(/^error: Stack PetStore-Production is not deployed in eu-west-1: deploy it/);
});
