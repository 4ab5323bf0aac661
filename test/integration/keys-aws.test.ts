import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  UpdateUsagePlanCommand,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { WRITE_RETRY_DELAYS_MS } from '../../admin/key-admin';
import { openTargetFor, runKeysCli } from '../../admin/keys-cli';
import {
  API_GATEWAY_RETRY_BOUND_MS,
  newPacing,
  openAwsTarget,
  retryingSends,
  UPDATE_USAGE_PLAN_INTERVAL_MS,
} from '../../admin/targets/aws';
import { type PooledPlan, pooledKeyName, pooledMeteringKey } from '../../definitions/metering-pool';
import { type PlanName, planNames, plans } from '../../definitions/plans';
import { authorizer } from '../../definitions/routes';
import type { TableName } from '../../definitions/tables';
import { customersPerPooledKey, usagePlanLimits } from '../../definitions/usage-plan-limits';
import { type ApiKeyRecord, CustomerTable, generateApiKey, itemsOf, keyState, limitsOf, meteringOf } from '../../functions/customers';
import { type MeteringPool, meteringSlot, usageIdentifierKeyOf } from '../../functions/domain/metering';
import { documentClientOver } from '../../functions/runtime/dependencies';
import { createTestTables, TestClock, testDynamoDbClient } from '../support/dynamo';
import { FakeApiGateway, serviceError } from '../support/fake-api-gateway';
import { startFakeControlPlane } from '../support/fake-control-plane-server';

/**
 * The key tool on a deployed stage (--stage staging): table names and usage
 * plan ids come from the CloudFormation stack's outputs; API Gateway's keys and
 * usage plans are recorded with aws-sdk-client-mock, since API Gateway cannot
 * run locally. DynamoDB is DynamoDB Local, with failures injected into its
 * client. Whatever fails halfway, DynamoDB and API Gateway must agree after.
 */
const REST_API_ID = 'a1b2c3d4e5';
const fixedPlanIds: Partial<Record<PlanName, string>> = { free: 'upfree01', pro: 'uppro001', business: 'upbus001' };
const fakeCredentials = { credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' } };
/** The stack's pooled metering keys, as CloudFormation makes them (lib/petstore-stack.ts) and the authorizer names them. */
const pool: MeteringPool = { prefix: '0f3e4c1a11114b5c9d8e7f6a5b4c3d2e', keysPerPlan: 10 };
const pooledPlans = planNames.filter((plan) => plans[plan].limits !== 'custom') as PooledPlan[];

let clock: TestClock;
let tableNames: Record<TableName, string>;
let dynamoDb: DynamoDBClient;
let keysTable: CustomerTable;
let cloudFormation: CloudFormationClient;
let cloudFormationMock: AwsClientStub<CloudFormationClient>;
let gateway: FakeApiGateway;
/** Every API Gateway and DynamoDB write (successful or not), in order. */
let writes: string[];
/** Every DynamoDB request, by command name, in order. */
let dynamoRequests: string[];
/** DynamoDB commands whose next calls fail: as many as the key tool tries a write (then it reads back). */
let dynamoFaults: Map<string, number>;
const failDynamo = (command: string) => dynamoFaults.set(command, 1 + WRITE_RETRY_DELAYS_MS.length);

const dynamoWrites = new Set(['PutItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand', 'DeleteItemCommand']);

beforeEach(async () => {
  clock = new TestClock();
  tableNames = await createTestTables();
  writes = [];
  dynamoRequests = [];
  dynamoFaults = new Map();
  dynamoDb = testDynamoDbClient();
  dynamoDb.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      dynamoRequests.push(command);
      if (dynamoWrites.has(command)) writes.push(command);
      const failuresLeft = dynamoFaults.get(command) ?? 0;
      if (failuresLeft > 0) {
        dynamoFaults.set(command, failuresLeft - 1);
        throw Object.assign(new Error('We encountered an internal error. Please try again.'), {
          name: 'InternalServerError',
          $fault: 'server',
          $metadata: { httpStatusCode: 500 },
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectFaults' },
  );
  keysTable = new CustomerTable(documentClientOver(dynamoDb), tableNames);

  cloudFormation = new CloudFormationClient({ region: 'eu-west-1', ...fakeCredentials });
  cloudFormationMock = mockClient(cloudFormation);
  cloudFormationMock.on(DescribeStacksCommand).rejects(serviceError('ValidationError', 'Stack with id PetStore-Production does not exist'));
  cloudFormationMock.on(DescribeStacksCommand, { StackName: 'PetStore-Staging' }).resolves({
    Stacks: [
      {
        StackName: 'PetStore-Staging',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date('2029-01-01T00:00:00Z'),
        Outputs: [
          { OutputKey: 'ApiUrl', OutputValue: `https://${REST_API_ID}.execute-api.eu-west-1.amazonaws.com/v1` },
          { OutputKey: 'RestApiId', OutputValue: REST_API_ID },
          { OutputKey: 'PetsTableName', OutputValue: tableNames.pets },
          { OutputKey: 'ApiKeysTableName', OutputValue: tableNames.apiKeys },
          { OutputKey: 'RateLimitsTableName', OutputValue: tableNames.rateLimits },
          { OutputKey: 'IdempotencyTableName', OutputValue: tableNames.idempotency },
          { OutputKey: 'FreeUsagePlanId', OutputValue: fixedPlanIds.free },
          { OutputKey: 'ProUsagePlanId', OutputValue: fixedPlanIds.pro },
          { OutputKey: 'BusinessUsagePlanId', OutputValue: fixedPlanIds.business },
          { OutputKey: 'MeteringKeysPerPlan', OutputValue: String(pool.keysPerPlan) },
        ],
      },
    ],
  });

  const apiGateway = new APIGatewayClient({ region: 'eu-west-1', ...fakeCredentials });
  gateway = new FakeApiGateway(apiGateway, (command) => writes.push(command));
  for (const [plan, id] of Object.entries(fixedPlanIds)) gateway.addStackPlan(id, `petstore-staging-${plan}`, REST_API_ID, 'v1');
  for (const plan of pooledPlans) {
    for (let slot = 0; slot < pool.keysPerPlan; slot++) {
      gateway.addKey(pooledKeyName('staging', plan, slot), pooledMeteringKey(pool.prefix, plan, slot), fixedPlanIds[plan]!);
    }
  }
  clients = { cloudFormation, apiGateway, dynamoDb };
  retryWaits = [];
});

let clients: { cloudFormation: CloudFormationClient; apiGateway: APIGatewayClient; dynamoDb: DynamoDBClient };
/** The waits of the key tool's API Gateway retries: each moves the test clock, so no test sleeps. */
let retryWaits: number[];
const retryTiming = {
  now: () => clock.now,
  sleep: async (ms: number) => {
    retryWaits.push(ms);
    clock.advance(ms);
  },
  random: () => 0.5,
};

afterEach(() => {
  gateway.mock.restore();
  cloudFormationMock.restore();
  dynamoDb.destroy();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** One `petstore-keys` command, by default in a process of its own (pass one `openTargetFor` to run several in one process). */
async function keys(args: string[], stage = 'staging', openTarget = openTargetFor({ awsClients: clients, retryTiming })): Promise<Run> {
  const run: Run = { code: -1, stdout: '', stderr: '' };
  run.code = await runKeysCli([...args, '--stage', stage], {
    clock: clock.read,
    out: (text) => {
      run.stdout += text;
    },
    err: (text) => {
      run.stderr += text;
    },
    openTarget,
  });
  return run;
}

async function issue(plan: PlanName, extra: string[] = []): Promise<ApiKeyRecord> {
  const run = await keys(['issue', '--plan', plan, '--owner', 'Acme Ltd', '--json', ...extra]);
  expect(run).toMatchObject({ code: 0, stderr: '' });
  const { keyId } = JSON.parse(run.stdout) as { keyId: string };
  return (await keysTable.findById(keyId))!;
}

function expectOneLineError(run: Run, message: RegExp): void {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
  expect(run.stderr).toMatch(message);
}

// An Enterprise customer's API key and usage plan are named after the customer (every secret of it is metered by them).
const apiKeyName = (record: ApiKeyRecord) => `petstore-staging-${record.customerId}`;
const ownPlanName = (record: ApiKeyRecord) => `petstore-staging-enterprise-${record.customerId}`;

/** The stack's pooled keys: the API keys there are with no customer key enrolled. */
const POOLED_KEYS = 3 * pool.keysPerPlan;
const isPooled = (name: string) => /^petstore-staging-(free|pro|business)-pool-\d+$/.test(name);

/**
 * DynamoDB and API Gateway agree: for every key that is not revoked, what the
 * authorizer returns as usageIdentifierKey is an enabled API key in exactly
 * its plan's usage plan: a pooled key of the plan for Free, Pro and Business;
 * for Enterprise, its own API key (value = its meteringKey) in a usage plan of
 * its own, with limits derived from the key's. Besides the pool, API Gateway
 * holds the Enterprise keys' API keys and usage plans, and nothing else.
 */
async function expectAgreement(stored?: ApiKeyRecord[], awaitingRelease: ApiKeyRecord[] = []): Promise<void> {
  // The records in DynamoDB, or (for thousands of keys) those the test wrote and counted there.
  const records = stored ?? (await keysTable.scanAll());
  const metered = records.filter((record) => !['revoked', 'expired'].includes(keyState(record, clock.now)));
  const byValue = new Map([...gateway.apiKeys.values()].map((key) => [key.value, key]));
  for (const record of metered) {
    const apiKey = byValue.get(usageIdentifierKeyOf(record, pool));
    expect(apiKey?.enabled).toBe(true);
    const plans = gateway.plansOf(apiKey!.id);
    expect(plans).toHaveLength(1);
    if (record.plan === 'enterprise') {
      const derived = usagePlanLimits(record.customLimits!);
      expect(apiKey!.name).toBe(apiKeyName(record));
      expect(plans[0]).toMatchObject({
        name: ownPlanName(record),
        apiStages: [{ apiId: REST_API_ID, stage: 'v1' }],
        throttle: { rateLimit: derived.rateLimit, burstLimit: derived.burstLimit },
      });
      // No quota: a flood or a retry loop could spend it before the contract's day is used up (definitions/usage-plan-limits.ts).
      expect(plans[0]!.quota).toBeUndefined();
    } else {
      expect(apiKey!.name).toBe(pooledKeyName('staging', record.plan, meteringSlot(record.customerId, pool.keysPerPlan)));
      expect(plans[0]!.id).toBe(fixedPlanIds[record.plan]);
    }
  }
  // Besides them, the API keys of keys moved off Enterprise or rotated, until release-metering lets them go.
  const enterprise = [...metered.filter((record) => record.plan === 'enterprise'), ...awaitingRelease];
  const names = [...gateway.apiKeys.values()].map((key) => key.name);
  expect(names.filter(isPooled)).toHaveLength(POOLED_KEYS);
  const unique = (values: string[]) => [...new Set(values)].sort();
  expect(names.filter((name) => !isPooled(name)).sort()).toEqual(unique(enterprise.map(apiKeyName)));
  const ownPlans = [...gateway.usagePlans.values()].filter((plan) => !Object.values(fixedPlanIds).includes(plan.id));
  expect(ownPlans.map((plan) => plan.name).sort()).toEqual(unique(enterprise.map(ownPlanName)));
}

/** Stores records 25 to a BatchWriteItem, several batches at a time: the fast way to fill DynamoDB Local with thousands of keys. */
async function storeAll(records: ApiKeyRecord[]): Promise<void> {
  const db = documentClientOver(dynamoDb);
  const batches: ApiKeyRecord[][] = [];
  for (let i = 0; i < records.length; i += 12) batches.push(records.slice(i, i + 12));
  const worker = async () => {
    for (let batch = batches.shift(); batch; batch = batches.shift()) {
      // Each record is a customer of its own: its customer item and its secret.
      const items = batch.flatMap((record) => Object.values(itemsOf(record)));
      let requests = { [tableNames.apiKeys]: items.map((Item) => ({ PutRequest: { Item } })) };
      while (requests[tableNames.apiKeys]?.length) {
        const { UnprocessedItems } = await db.send(new BatchWriteCommand({ RequestItems: requests }));
        requests = (UnprocessedItems ?? {}) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** Items in a table, counted by DynamoDB (a COUNT scan, page by page) without reading them back. */
async function countItems(tableName: string): Promise<number> {
  const db = documentClientOver(dynamoDb);
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: tableName, Select: 'COUNT', ExclusiveStartKey: startKey }));
    count += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}

function newRecord(plan: PooledPlan, i: number): ApiKeyRecord {
  return generateApiKey({ plan, owner: `Customer ${i}`, now: clock.now }).record;
}

describe('issue', () => {
  it('a fixed-plan key is metered by a pooled key of its plan: only the DynamoDB record is written', async () => {
    await issue('pro');
    expect(cloudFormationMock.commandCalls(DescribeStacksCommand)[0]!.args[0].input).toEqual({ StackName: 'PetStore-Staging' });
    // The customer and its first secret, in one transaction.
    expect(writes).toEqual(['TransactWriteItemsCommand']);
    expect(gateway.apiKeys.size).toBe(POOLED_KEYS);
    await expectAgreement();
  });

  it('an Enterprise key gets an API key of its own first, then the DynamoDB record', async () => {
    const record = await issue('enterprise', ['--per-minute', '6000', '--per-day', '5000000']);
    expect(gateway.mock.commandCalls(CreateApiKeyCommand)[0]!.args[0].input).toMatchObject({
      name: apiKeyName(record),
      value: record.meteringKey,
      enabled: true,
    });
    const apiKey = gateway.keyNamed(apiKeyName(record))!;
    expect(gateway.mock.commandCalls(CreateUsagePlanKeyCommand)[0]!.args[0].input).toEqual({
      usagePlanId: gateway.planNamed(ownPlanName(record))!.id,
      keyId: apiKey.id,
      keyType: 'API_KEY',
    });
    expect(writes).toEqual(['CreateApiKeyCommand', 'CreateUsagePlanCommand', 'CreateUsagePlanKeyCommand', 'TransactWriteItemsCommand']);
    await expectAgreement();
  });

  it('says which quota to raise when API Gateway refuses another usage plan, and leaves nothing behind', async () => {
    gateway.failNext(CreateUsagePlanCommand, 'LimitExceededException');
    const run = await keys(['issue', '--plan', 'enterprise', '--owner', 'Acme Ltd', '--per-minute', '100', '--per-day', '1000']);
    expectOneLineError(run, /usage plans per Region quota \(300 by default; every Enterprise key takes one\)\. Request an increase/);
    expect(await keysTable.scanAll()).toEqual([]);
    await expectAgreement();
  });

  it('gives an Enterprise key a usage plan of its own on the REST API stage v1, with limits derived from its own', async () => {
    const record = await issue('enterprise', ['--per-minute', '6000', '--per-day', '5000000']);
    expect(gateway.mock.commandCalls(CreateUsagePlanCommand)[0]!.args[0].input).toMatchObject({
      name: ownPlanName(record),
      apiStages: [{ apiId: REST_API_ID, stage: 'v1' }],
      throttle: { rateLimit: 200, burstLimit: 12_000 },
    });
    expect(gateway.mock.commandCalls(CreateUsagePlanCommand)[0]!.args[0].input.quota).toBeUndefined();
    await expectAgreement();
  });

  it('leaves nothing behind when API Gateway fails before the DynamoDB write', async () => {
    gateway.failNext(CreateUsagePlanKeyCommand);
    expectOneLineError(
      await keys(['issue', '--plan', 'enterprise', '--owner', 'Acme Ltd', '--per-minute', '100', '--per-day', '1000']),
      /CreateUsagePlanKey failed/,
    );
    expect(gateway.mock.commandCalls(DeleteApiKeyCommand)).toHaveLength(1);
    expect(writes).not.toContain('TransactWriteItemsCommand');
    expect(await keysTable.scanAll()).toEqual([]);
    await expectAgreement();
  });

  it('deletes the API Gateway key and usage plan again when the DynamoDB write fails', async () => {
    failDynamo('TransactWriteItemsCommand');
    expectOneLineError(
      await keys(['issue', '--plan', 'enterprise', '--owner', 'Acme Ltd', '--per-minute', '100', '--per-day', '1000']),
      /DynamoDB did not answer .*nothing was written/,
    );
    expect(gateway.apiKeys.size).toBe(POOLED_KEYS);
    expect(await keysTable.scanAll()).toEqual([]);
    await expectAgreement();
  });

  it('names what is left to do by hand when even the undo fails', async () => {
    failDynamo('TransactWriteItemsCommand');
    gateway.failNext(DeleteApiKeyCommand);
    const run = await keys(['issue', '--plan', 'enterprise', '--owner', 'Acme Ltd', '--per-minute', '100', '--per-day', '1000']);
    expectOneLineError(
      run,
      /Undoing the API Gateway change failed too: still to do by hand in API Gateway: delete API key petstore-staging-key_\w+/,
    );
  });
});

/**
 * CreateUsagePlanKey "can run only one at a time in an AWS region" (AWS Support,
 * quoted in https://github.com/serverless/serverless/issues/12065): a deploy or
 * another administrator's command makes it answer 409 ConflictException.
 */
describe("API Gateway's 409 and 429: retried with backoff for a bounded time", () => {
  const issueEnterprise = () =>
    keys(['issue', '--plan', 'enterprise', '--owner', 'Acme Ltd', '--per-minute', '100', '--per-day', '1000', '--json']);

  it('409 twice, then success: the command succeeds after two waits of full jitter (random × min(8 s, 250 ms × 2^retry))', async () => {
    gateway.failNext(CreateUsagePlanKeyCommand, 'ConflictException', 2);
    const run = await issueEnterprise();
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(retryWaits).toEqual([125, 250]);
    expect(gateway.mock.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(3);
    expect((await keysTable.scanAll()).map((record) => record.keyId)).toEqual([(JSON.parse(run.stdout) as { keyId: string }).keyId]);
    await expectAgreement();
  });

  it('429 on a revoke: retried the same way, and the revoke completes', async () => {
    const record = await issue('enterprise', ['--per-minute', '100', '--per-day', '1000']);
    gateway.failNext(DeleteUsagePlanKeyCommand, 'TooManyRequestsException');
    expect(await keys(['revoke', record.keyId])).toMatchObject({ code: 0, stderr: '' });
    expect(retryWaits).toEqual([125]);
    expect((await keysTable.findById(record.keyId))!.status).toBe('revoked');
    await expectAgreement();
  });

  it(`409 for ${API_GATEWAY_RETRY_BOUND_MS / 1000} s: says each wait of a second or more, fails with one line and undoes what it did (no API key, usage plan or key record left)`, async () => {
    gateway.failNext(CreateUsagePlanKeyCommand, 'ConflictException', Number.POSITIVE_INFINITY);
    const started = clock.now;
    const run = await issueEnterprise();
    expect(run).toMatchObject({ code: 1, stdout: '' });
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(
      /^error: API Gateway kept refusing CreateUsagePlanKey for 60 s \(ConflictException: Unable to complete operation due to concurrent modification\. Please try again later\.\): a deploy or another petstore-keys command/,
    );
    const announced = retryWaits.filter((wait) => wait >= 1_000);
    expect(lines.slice(0, -1)).toEqual(
      announced.map(
        (wait) =>
          `waiting ${Math.ceil(wait / 1000)} s: API Gateway refused CreateUsagePlanKey (ConflictException: Unable to complete operation due to concurrent modification. Please try again later.)`,
      ),
    );
    expect(announced.length).toBeGreaterThan(0);
    // It gave up at the bound, not before, and no wait went past it.
    expect(clock.now - started).toBe(API_GATEWAY_RETRY_BOUND_MS);
    expect(Math.max(...retryWaits)).toBeLessThanOrEqual(4_000);
    expect(gateway.apiKeys.size).toBe(POOLED_KEYS);
    expect(gateway.usagePlans.size).toBe(Object.keys(fixedPlanIds).length);
    expect(await keysTable.scanAll()).toEqual([]);
    expect(writes).not.toContain('TransactWriteItemsCommand');
    await expectAgreement();
  });
});

/**
 * API Gateway allows one UpdateUsagePlan every 20 s per account, not raisable
 * ("Amazon API Gateway quotas", https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html).
 * The fake refuses calls closer together with 429 TooManyRequestsException and
 * the seconds left as Retry-After, on the test's clock: no test sleeps.
 */
describe("API Gateway's UpdateUsagePlan quota: one call every 20 s per account", () => {
  const quotaWait = (seconds: number) => `waiting ${seconds} s: API Gateway allows one UpdateUsagePlan every 20 s per account`;
  const enterpriseLimits = (perMinute: number) => ['--per-minute', String(perMinute), '--per-day', '100000'];
  const throttleOf = (record: ApiKeyRecord) => gateway.planNamed(ownPlanName(record))!.throttle;
  beforeEach(() => gateway.enforceUpdateUsagePlanQuota(() => clock.now));

  it('two Enterprise changes in a row in one process: the second waits 20 s, says so, and both succeed without a 429', async () => {
    const record = await issue('enterprise', enterpriseLimits(5));
    const oneProcess = openTargetFor({ awsClients: clients, retryTiming });
    expect(await keys(['set-plan', record.keyId, 'enterprise', ...enterpriseLimits(600)], 'staging', oneProcess)).toMatchObject({
      code: 0,
      stderr: '',
    });
    const second = await keys(['set-plan', record.keyId, 'enterprise', ...enterpriseLimits(900)], 'staging', oneProcess);
    expect(second).toMatchObject({ code: 0, stderr: `${quotaWait(20)}\n` });
    // No stronger words than AWS's about when the usage plan applies.
    expect(second.stdout).toContain(
      'Its usage plan in API Gateway follows as a backstop, not as these limits: AWS documents no time within which a usage-plan change takes effect, and calls its limits targets that "in some cases clients can exceed".',
    );
    expect(retryWaits).toEqual([UPDATE_USAGE_PLAN_INTERVAL_MS]);
    expect(gateway.updateUsagePlanRefusals).toBe(0);
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 900, perDay: 100000 }));
    await expectAgreement();
  });

  it('two Enterprise changes 5 s apart in two processes: the second is refused with 429, waits the 15 s API Gateway asks, says so, and succeeds', async () => {
    const record = await issue('enterprise', enterpriseLimits(5));
    expect(await keys(['set-plan', record.keyId, 'enterprise', ...enterpriseLimits(600)])).toMatchObject({ code: 0, stderr: '' });
    clock.advance(5_000);
    const second = await keys(['set-plan', record.keyId, 'enterprise', ...enterpriseLimits(900)]);
    expect(second).toMatchObject({ code: 0, stderr: `${quotaWait(15)} (TooManyRequestsException)\n` });
    expect(retryWaits).toEqual([15_000]);
    expect(gateway.updateUsagePlanRefusals).toBe(1);
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 900, perDay: 100000 }));
    expect((await keysTable.findById(record.keyId))!.customLimits).toEqual({ perMinute: 900, perDay: 100000 });
    await expectAgreement();
  });

  it('release-metering of two keys: 20 s between the two usage plans it detaches, said on standard error', async () => {
    const moved = [await issue('enterprise', enterpriseLimits(600)), await issue('enterprise', enterpriseLimits(600))];
    for (const record of moved) {
      expect(await keys(['set-plan', record.keyId, 'pro'])).toMatchObject({ code: 0, stderr: '' });
      clock.advance(UPDATE_USAGE_PLAN_INTERVAL_MS);
    }
    clock.advance(authorizer.resultsCacheTtlSeconds * 1000);
    retryWaits = [];
    const released = await keys(['release-metering']);
    expect(released).toMatchObject({ code: 0, stderr: `${quotaWait(20)}\n` });
    expect(released.stdout).toContain('2 API key(s) released; 0 still named by cached authorizer answers.');
    // Each release detaches its usage plan from the stage (UpdateUsagePlan) before deleting it: 20 s a key after the first.
    expect(retryWaits).toEqual([UPDATE_USAGE_PLAN_INTERVAL_MS]);
    expect(gateway.updateUsagePlanRefusals).toBe(0);
    await expectAgreement();
  });

  it('UpdateUsagePlan refused for 60 s: three waits of 20 s said, then one line in the words of the quota, and the raise never happened', async () => {
    const record = await issue('enterprise', enterpriseLimits(5));
    gateway.failNext(UpdateUsagePlanCommand, 'TooManyRequestsException', Number.POSITIVE_INFINITY);
    const run = await keys(['set-plan', record.keyId, 'enterprise', ...enterpriseLimits(600)]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(
      `${quotaWait(20)} (TooManyRequestsException)\n`.repeat(3) +
        'error: API Gateway kept refusing UpdateUsagePlan for 60 s (TooManyRequestsException: Too Many Requests): API Gateway allows one UpdateUsagePlan every 20 s per account, and a deploy or another petstore-keys command in this account and Region kept calling it. Run the command again once it has finished.\n',
    );
    expect(retryWaits).toEqual([20_000, 20_000, 20_000]);
    expect((await keysTable.findById(record.keyId))!.customLimits).toEqual({ perMinute: 5, perDay: 100000 });
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 5, perDay: 100000 }));
  });

  it("over HTTP, as AWS answers: the 429's Retry-After reaches the SDK and the tool waits exactly that long", async () => {
    const controlPlane = await startFakeControlPlane(gateway, []);
    // One try per send: the SDK's own retries would spend the test's time on the same 429.
    const overHttp = new APIGatewayClient({ endpoint: controlPlane.endpoint, region: 'eu-west-1', maxAttempts: 1, ...fakeCredentials });
    try {
      const notices: string[] = [];
      const patch = () =>
        new UpdateUsagePlanCommand({
          usagePlanId: fixedPlanIds.pro!,
          patchOperations: [{ op: 'replace', path: '/throttle/rateLimit', value: '10' }],
        });
      await overHttp.send(patch());
      clock.advance(8_000);
      await retryingSends(
        overHttp,
        retryTiming,
        newPacing((line) => notices.push(line)),
      ).send(patch());
      expect(retryWaits).toEqual([12_000]);
      expect(notices).toEqual([`${quotaWait(12)} (TooManyRequestsException)`]);
      expect(gateway.updateUsagePlanRefusals).toBe(1);
    } finally {
      overHttp.destroy();
      await controlPlane.close();
    }
  });

  it('a permanent ConflictException fails at once with its own message, waits for nothing and leaves nothing behind', async () => {
    const record = await issue('pro');
    // An API key with the customer's metering key as its value already exists: API Gateway refuses a second one, for good.
    gateway.addKey('made-by-hand', record.meteringKey, fixedPlanIds.business!);
    writes = [];
    const started = clock.now;
    const run = await keys(['set-plan', record.keyId, 'enterprise', ...enterpriseLimits(600)]);
    expectOneLineError(
      run,
      /^error: API Gateway refused CreateApiKey \(ConflictException: API key value already exists\)\. This conflict is not a concurrent modification, so it was not retried/,
    );
    expect(run.stderr).not.toMatch(/kept refusing|another petstore-keys command/);
    expect([clock.now - started, retryWaits]).toEqual([0, []]);
    expect(writes).toEqual(['CreateApiKeyCommand']);
    expect((await keysTable.findById(record.keyId))!.plan).toBe('pro');
    expect(gateway.planNamed(ownPlanName(record))).toBeUndefined();
  });
});

describe('set-plan', () => {
  it('between fixed plans: only DynamoDB changes (the pooled key of the new plan meters it)', async () => {
    const record = await issue('pro');
    writes = [];
    const moved = await keys(['set-plan', record.keyId, 'business']);
    expect(moved.code).toBe(0);
    expect(moved.stdout).not.toContain('usage plan');
    expect(writes).toEqual(['TransactWriteItemsCommand']);
    expect((await keysTable.findById(record.keyId))!.plan).toBe('business');
    await expectAgreement();
  });

  it('deletes the new Enterprise usage plan again when API Gateway fails halfway through the move', async () => {
    const record = await issue('pro');
    gateway.failNext(CreateUsagePlanKeyCommand);
    expectOneLineError(
      await keys(['set-plan', record.keyId, 'enterprise', '--per-minute', '600', '--per-day', '50000']),
      /CreateUsagePlanKey failed/,
    );
    expect((await keysTable.findById(record.keyId))!.plan).toBe('pro');
    await expectAgreement();
  });

  it('creates an Enterprise usage plan, updates its limits, and deletes it when the key leaves Enterprise', async () => {
    const record = await issue('pro');
    expect((await keys(['set-plan', record.keyId, 'enterprise', '--per-minute', '600', '--per-day', '50000'])).code).toBe(0);
    await expectAgreement();
    expect((await keys(['set-plan', record.keyId, 'enterprise', '--per-minute', '900', '--per-day', '50000'])).code).toBe(0);
    expect(gateway.planNamed(ownPlanName(record))!.throttle).toEqual({ rateLimit: 30, burstLimit: 1_800 });
    await expectAgreement();

    failDynamo('TransactWriteItemsCommand');
    expect((await keys(['set-plan', record.keyId, 'enterprise', '--per-minute', '1200', '--per-day', '50000'])).code).toBe(1);
    expect(gateway.planNamed(ownPlanName(record))!.throttle).toEqual({ rateLimit: 30, burstLimit: 1_800 });
    await expectAgreement();

    expect((await keys(['set-plan', record.keyId, 'free'])).code).toBe(0);
    await expectAgreement(undefined, [record]);
    clock.advance(authorizer.resultsCacheTtlSeconds * 1000);
    expect((await keys(['release-metering'])).code).toBe(0);
    expect(gateway.planNamed(ownPlanName(record))).toBeUndefined();
    await expectAgreement();
  });
});

/**
 * API Gateway applies the usage plan of the API key the authorizer's (cached)
 * answer names, per API key ("Usage plans and API keys for REST APIs in API
 * Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-usage-plans.html),
 * whatever the customer's record says now. So the customer's own usage plan
 * changes in the order that never refuses what the new plan allows: raised
 * before the DynamoDB write, lowered after it.
 */
describe("set-plan changes the customer's own usage plan in the order that never refuses what the new plan allows", () => {
  const throttleOf = (record: ApiKeyRecord) => gateway.planNamed(ownPlanName(record))!.throttle;
  const setPlan = async (record: ApiKeyRecord, plan: PlanName, limits: string[] = []) => {
    writes = [];
    return keys(['set-plan', record.keyId, plan, ...limits]);
  };

  it('Enterprise 5/min → 600/min: raised before the write; 600 → 5: lowered after it', async () => {
    const record = await issue('enterprise', ['--per-minute', '5', '--per-day', '1000']);
    expect((await setPlan(record, 'enterprise', ['--per-minute', '600', '--per-day', '1000'])).code).toBe(0);
    expect(writes).toEqual(['UpdateUsagePlanCommand', 'TransactWriteItemsCommand']);
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 600, perDay: 1000 }));
    expect((await setPlan(record, 'enterprise', ['--per-minute', '5', '--per-day', '1000'])).code).toBe(0);
    expect(writes).toEqual(['TransactWriteItemsCommand', 'UpdateUsagePlanCommand']);
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 5, perDay: 1000 }));
    await expectAgreement();
  });

  it('Enterprise → a fixed plan: the own usage plan (which cached answers still name) follows, raised before, lowered after', async () => {
    const small = await issue('enterprise', ['--per-minute', '5', '--per-day', '1000']);
    expect((await setPlan(small, 'business')).code).toBe(0);
    expect(writes).toEqual(['UpdateUsagePlanCommand', 'TransactWriteItemsCommand']);
    expect(throttleOf(small)).toEqual(usagePlanLimits(limitsOf({ plan: 'business' })));

    const large = await issue('enterprise', ['--per-minute', '6000', '--per-day', '1000000']);
    expect((await setPlan(large, 'free')).code).toBe(0);
    expect(writes).toEqual(['TransactWriteItemsCommand', 'UpdateUsagePlanCommand']);
    expect(throttleOf(large)).toEqual(usagePlanLimits(limitsOf({ plan: 'free' })));
    await expectAgreement(undefined, [small, large]);

    // Back to Enterprise before release-metering let it go: its own plan again, raised first.
    expect((await setPlan(large, 'enterprise', ['--per-minute', '6000', '--per-day', '1000000'])).code).toBe(0);
    expect(writes).toEqual(['UpdateUsagePlanCommand', 'TransactWriteItemsCommand']);
    await expectAgreement(undefined, [small]);
  });

  it('a fixed plan → Enterprise: its API key and usage plan exist before the write', async () => {
    const record = await issue('free');
    expect((await setPlan(record, 'enterprise', ['--per-minute', '5', '--per-day', '1000'])).code).toBe(0);
    expect(writes).toEqual(['CreateApiKeyCommand', 'CreateUsagePlanCommand', 'CreateUsagePlanKeyCommand', 'TransactWriteItemsCommand']);
    await expectAgreement();
  });

  it('a raise is undone when the write does not land', async () => {
    const record = await issue('enterprise', ['--per-minute', '5', '--per-day', '1000']);
    failDynamo('TransactWriteItemsCommand');
    expect((await setPlan(record, 'enterprise', ['--per-minute', '600', '--per-day', '1000'])).code).toBe(1);
    expect(writes.filter((write) => write === 'UpdateUsagePlanCommand')).toHaveLength(2);
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 5, perDay: 1000 }));
    await expectAgreement();
  });

  it('a lowering that fails after the write is a warning naming the command that finishes it', async () => {
    const record = await issue('enterprise', ['--per-minute', '600', '--per-day', '1000']);
    gateway.failNext(UpdateUsagePlanCommand);
    const lowered = await setPlan(record, 'enterprise', ['--per-minute', '5', '--per-day', '1000']);
    expect(lowered.code).toBe(0);
    expect(lowered.stderr).toMatch(
      /^warning: The usage plan in API Gateway was not lowered to the new limits \([^\n]*UpdateUsagePlan failed/,
    );
    expect(lowered.stderr).toContain(
      `it allows more until it is, and the API's own limits apply meanwhile. Run \`petstore-keys set-plan ${record.keyId} enterprise --per-minute 5 --per-day 1000\` on staging (PetStore-Staging) again to lower it.\n`,
    );
    // Higher than the plan, never lower: nothing the new plan allows is refused.
    expect((await keysTable.findById(record.keyId))!.customLimits).toEqual({ perMinute: 5, perDay: 1000 });
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 600, perDay: 1000 }));
    const again = await setPlan(record, 'enterprise', ['--per-minute', '5', '--per-day', '1000']);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(writes).toEqual(['UpdateUsagePlanCommand']);
    expect(throttleOf(record)).toEqual(usagePlanLimits({ perMinute: 5, perDay: 1000 }));
    await expectAgreement();
  });
});

/**
 * API Gateway caches the authorizer's answer, usageIdentifierKey included, for
 * the authorizer's TTL; a request whose usageIdentifierKey is no enabled API
 * key of a usage plan of the stage is refused (INVALID_API_KEY, our 401). So
 * whatever the key tool changes, every answer cached before the change and
 * every answer after it must name a metered API key until the cache has let
 * the old answers go.
 */
describe('no working key answers 401 while the authorizer caches answers', () => {
  const ttlMs = authorizer.resultsCacheTtlSeconds * 1000;
  const meters = (record: ApiKeyRecord) => gateway.meters(usageIdentifierKeyOf(record, pool), REST_API_ID, 'v1');

  it('set-plan Enterprise → Pro: the cached answers keep their API key until the TTL, then release-metering releases it', async () => {
    const before = await issue('enterprise', ['--per-minute', '600', '--per-day', '50000']);
    expect(meters(before)).toBe(true);
    const moved = await keys(['set-plan', before.keyId, 'pro']);
    expect(moved.code).toBe(0);
    const after = (await keysTable.findById(before.keyId))!;
    expect(moved.stdout).toContain(
      `Its own API key and usage plan stay until the authorizer's cached answers have expired (${new Date(Date.parse(after.customerUpdatedAt) + ttlMs).toISOString()}): then run \`petstore-keys release-metering --stage staging\``,
    );
    for (const elapsed of [0, ttlMs - 1]) {
      clock.now = Date.parse(after.customerUpdatedAt) + elapsed;
      expect([meters(before), meters(after)]).toEqual([true, true]);
      const early = await keys(['release-metering']);
      expect(early.stdout).toContain(
        `0 API key(s) released; 1 still named by cached authorizer answers: run again after ${new Date(Date.parse(after.customerUpdatedAt) + ttlMs).toISOString()}.`,
      );
    }
    clock.now = Date.parse(after.customerUpdatedAt) + ttlMs;
    const released = await keys(['release-metering']);
    expect(released.stdout).toContain(
      `released API key ${apiKeyName(before)} and its usage plan (${before.keyId}: Pro now, metered by the pool)`,
    );
    expect([meters(before), meters(after)]).toEqual([false, true]);
    expect(gateway.planNamed(ownPlanName(before))).toBeUndefined();
    await expectAgreement();
  });

  it('set-plan Enterprise → Pro → Business within the TTL: the API key answers cached under Enterprise name still meters', async () => {
    const before = await issue('enterprise', ['--per-minute', '600', '--per-day', '50000']);
    expect((await keys(['set-plan', before.keyId, 'pro'])).code).toBe(0);
    clock.advance(1_000);
    expect((await keys(['set-plan', before.keyId, 'business'])).code).toBe(0);
    const after = (await keysTable.findById(before.keyId))!;
    expect([meters(before), meters(after)]).toEqual([true, true]);
    // Its own usage plan follows the customer's limits until release-metering lets it go.
    expect(gateway.planNamed(ownPlanName(before))!.throttle).toEqual(usagePlanLimits(limitsOf({ plan: 'business' })));
    await expectAgreement(undefined, [before]);
  });

  it('set-plan Pro → Enterprise: the pooled key the cached answers name and the new API key both meter', async () => {
    const before = await issue('pro');
    expect((await keys(['set-plan', before.keyId, 'enterprise', '--per-minute', '600', '--per-day', '50000'])).code).toBe(0);
    const after = (await keysTable.findById(before.keyId))!;
    expect([meters(before), meters(after)]).toEqual([true, true]);
    clock.advance(ttlMs);
    expect((await keys(['release-metering'])).stdout).toContain('0 API key(s) released; 0 still named');
    expect(meters(after)).toBe(true);
    await expectAgreement();
  });

  it("a rotation keeps the Enterprise customer's API key and usage plan: both secrets are metered by them, through the grace and after it", async () => {
    const old = await issue('enterprise', ['--per-minute', '600', '--per-day', '50000']);
    writes = [];
    const run = await keys(['rotate', old.keyId, '--grace', '1h']);
    expect(run.code).toBe(0);
    expect(writes).toEqual(['TransactWriteItemsCommand']);
    const successor = (await keysTable.findById(/its successor (key_\w+)/.exec(run.stdout)![1]!))!;
    expect(usageIdentifierKeyOf(successor, pool)).toBe(usageIdentifierKeyOf(old, pool));
    clock.advance(3_600_000);
    expect((await keys(['release-metering'])).stdout).toContain('0 API key(s) released; 0 still named');
    expect([meters(old), meters(successor)]).toEqual([true, true]);
    await expectAgreement();
  });

  it("releases an Enterprise customer's API key and usage plan once none of its secrets works", async () => {
    const old = await issue('enterprise', ['--per-minute', '600', '--per-day', '50000']);
    const run = await keys(['rotate', old.keyId, '--grace', '1h']);
    const successorId = /its successor (key_\w+)/.exec(run.stdout)![1]!;
    // Revoking one secret while the other works leaves the customer metered.
    expect((await keys(['revoke', successorId])).code).toBe(0);
    expect(meters(old)).toBe(true);
    clock.advance(3_600_000 - 1);
    expect((await keys(['release-metering'])).stdout).toContain('0 API key(s) released; 0 still named');
    clock.advance(1);
    expect((await keys(['release-metering'])).stdout).toContain(
      `released API key ${apiKeyName(old)} and its usage plan (${old.customerId}: no working key`,
    );
    expect(gateway.planNamed(ownPlanName(old))).toBeUndefined();
    await expectAgreement();
  });

  it('leaves an API key without a key record alone (an issue between its API Gateway step and its DynamoDB write)', async () => {
    const record = generateApiKey({
      plan: 'enterprise',
      owner: 'Acme Ltd',
      customLimits: { perMinute: 60, perDay: 600 },
      now: clock.now,
    }).record;
    gateway.addKey(apiKeyName(record), record.meteringKey, fixedPlanIds.pro!);
    clock.advance(ttlMs * 10);
    expect((await keys(['release-metering'])).stdout).toContain('0 API key(s) released; 0 still named');
    expect(gateway.keyNamed(apiKeyName(record))).toBeDefined();
  });
});

describe('rotate', () => {
  it("gives an Enterprise successor the customer's plan and limits, metered by the customer's own API key and usage plan", async () => {
    const record = await issue('enterprise', ['--per-minute', '600', '--per-day', '50000']);
    const run = await keys(['rotate', record.keyId, '--grace', '1h', '--json']);
    expect(run.code).toBe(0);
    const successor = (await keysTable.findById((JSON.parse(run.stdout) as { keyId: string }).keyId))!;
    expect(successor).toMatchObject({
      plan: 'enterprise',
      owner: 'Acme Ltd',
      status: 'active',
      customLimits: { perMinute: 600, perDay: 50_000 },
    });
    expect(successor.customerId).toBe(record.customerId);
    expect(gateway.plansOf(gateway.keyNamed(apiKeyName(successor))!.id).map((plan) => plan.name)).toEqual([ownPlanName(record)]);
    expect((await keysTable.findById(record.keyId))!.expiresAt).toBe(new Date(clock.now + 3_600_000).toISOString());
    await expectAgreement();
  });

  it('leaves the old key untouched when the DynamoDB transaction fails', async () => {
    const record = await issue('enterprise', ['--per-minute', '600', '--per-day', '50000']);
    failDynamo('TransactWriteItemsCommand');
    expectOneLineError(await keys(['rotate', record.keyId]), /DynamoDB did not answer/);
    expect(await keysTable.findById(record.keyId)).toEqual(record);
    expect(await keysTable.scanAll()).toHaveLength(1);
    await expectAgreement();
  });
});

describe('revoke', () => {
  it('a pooled key: only the DynamoDB record changes (the pooled key keeps metering the others)', async () => {
    const record = await issue('free');
    writes = [];
    expect((await keys(['revoke', record.keyId])).code).toBe(0);
    expect(writes).toEqual(['TransactWriteItemsCommand']);
    await expectAgreement();
  });

  it('disables the API key and takes it out of its usage plan, revokes the record, then deletes the API key', async () => {
    const record = await issue('enterprise', ['--per-minute', '100', '--per-day', '1000']);
    writes = [];
    const run = await keys(['revoke', record.keyId]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`Revoked ${record.keyId}`);
    expect(run.stdout).toContain('in staging (PetStore-Staging)');
    expect(writes).toEqual([
      'UpdateApiKeyCommand',
      'DeleteUsagePlanKeyCommand',
      'TransactWriteItemsCommand',
      'DeleteApiKeyCommand',
      'UpdateUsagePlanCommand',
      'DeleteUsagePlanCommand',
    ]);
    expect((await keysTable.findById(record.keyId))!.status).toBe('revoked');
    await expectAgreement();
  });

  it("finds the customer's other secrets through the customer's item, each read strongly, never a Scan or an index: DynamoDB requests counted by kind", async () => {
    const old = await issue('enterprise', ['--per-minute', '100', '--per-day', '1000']);
    const rotated = await keys(['rotate', old.keyId, '--grace', '1h']);
    const successor = (await keysTable.findById(/its successor (key_\w+)/.exec(rotated.stdout)![1]!))!;
    dynamoRequests = [];
    expect((await keys(['revoke', old.keyId])).code).toBe(0);
    const byKind = Object.fromEntries([...new Set(dynamoRequests)].map((kind) => [kind, dynamoRequests.filter((k) => k === kind).length]));
    // The key by its id (the byKeyId index, then its secret and customer), its customer again with the two secrets it names (decision 16), the write.
    expect(byKind).toEqual({ QueryCommand: 1, GetItemCommand: 5, TransactWriteItemsCommand: 1 });
    // The successor still works, so the customer's API key and usage plan stay.
    expect(gateway.meters(successor.meteringKey, REST_API_ID, 'v1')).toBe(true);
    await expectAgreement();
  });

  it('restores the API key when the DynamoDB write fails: the key stays active and metered', async () => {
    const record = await issue('enterprise', ['--per-minute', '100', '--per-day', '1000']);
    failDynamo('TransactWriteItemsCommand');
    expectOneLineError(await keys(['revoke', record.keyId]), /DynamoDB did not answer/);
    expect((await keysTable.findById(record.keyId))!.status).toBe('active');
    await expectAgreement();
  });

  it('changes nothing when API Gateway fails before the DynamoDB write', async () => {
    const record = await issue('enterprise', ['--per-minute', '100', '--per-day', '1000']);
    gateway.failNext(DeleteUsagePlanKeyCommand);
    expectOneLineError(await keys(['revoke', record.keyId]), /DeleteUsagePlanKey failed/);
    expect(await keysTable.findById(record.keyId)).toEqual(record);
    await expectAgreement();
  });

  it('reports unfinished clean-up as a warning, and a second revoke finishes it', async () => {
    const record = await issue('enterprise', ['--per-minute', '100', '--per-day', '1000']);
    gateway.failNext(DeleteApiKeyCommand);
    const first = await keys(['revoke', record.keyId]);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/^warning: Clean-up in API Gateway is unfinished: [^\n]*DeleteApiKey failed[^\n]*\n$/);
    // Revoked, and the leftover API key meters nothing: disabled, in no usage plan.
    const leftover = gateway.keyNamed(apiKeyName(record))!;
    expect(leftover.enabled).toBe(false);
    expect(gateway.plansOf(leftover.id)).toEqual([]);
    const second = await keys(['revoke', record.keyId]);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toContain('was revoked already');
    await expectAgreement();
  });
});

describe('pooled metering', () => {
  it('12,000 fixed-plan keys through the AWS target add no API key; each Enterprise key adds one', async () => {
    const target = await openAwsTarget({ stage: 'staging', clients });
    const records: ApiKeyRecord[] = [];
    for (let i = 0; i < 12_000; i++) {
      const record = newRecord(pooledPlans[i % pooledPlans.length]!, i);
      // What issue does before its DynamoDB write; the records are then written in batches (storeAll).
      const change = await target.metering.enrol(meteringOf(record));
      await change.finish();
      records.push(record);
    }
    await storeAll(records);
    expect(gateway.mock.commandCalls(CreateApiKeyCommand)).toHaveLength(0);
    for (const perMinute of [100, 200, 300]) {
      records.push(await issue('enterprise', ['--per-minute', String(perMinute), '--per-day', '100000']));
    }

    expect(gateway.apiKeys.size).toBe(pool.keysPerPlan * pooledPlans.length + 3);
    // A customer's record and its secret: two items each.
    expect(await countItems(tableNames.apiKeys)).toBe(2 * 12_003);
    await expectAgreement(records);
    // The hash spreads them as the pooled usage plans are sized for (definitions/usage-plan-limits.ts).
    const perPooledKey = new Map<string, number>();
    for (const record of records.filter(({ plan }) => plan !== 'enterprise')) {
      const value = usageIdentifierKeyOf(record, pool);
      perPooledKey.set(value, (perPooledKey.get(value) ?? 0) + 1);
    }
    expect(perPooledKey.size).toBe(pool.keysPerPlan * pooledPlans.length);
    expect(Math.max(...perPooledKey.values())).toBeLessThanOrEqual(customersPerPooledKey(12_000 / pooledPlans.length, pool.keysPerPlan));
  }, 120_000);
});

describe('errors an operator can act on', () => {
  it('the stack is not deployed', async () => {
    expectOneLineError(
      await keys(['list'], 'production'),
      /^error: Stack PetStore-Production is not deployed in eu-west-1: deploy it \(`npx cdk deploy PetStore-Production`\) or pass --region/,
    );
  });

  it('no AWS credentials, or expired ones', async () => {
    cloudFormationMock
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }));
    expectOneLineError(await keys(['list']), /^error: No usable AWS credentials: set AWS_PROFILE/);
    cloudFormationMock
      .on(DescribeStacksCommand)
      .rejects(serviceError('ExpiredToken', 'The security token included in the request is expired'));
    expectOneLineError(await keys(['list']), /^error: Your AWS credentials have expired/);
  });

  it('a stack without the outputs the tool reads (an older version)', async () => {
    cloudFormationMock.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: 'PetStore-Staging', StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: [] }],
    });
    expectOneLineError(
      await keys(['list']),
      /^error: Stack PetStore-Staging \(UPDATE_COMPLETE\) has no output RestApiId: deploy the current version/,
    );
  });

  it('an unknown key id', async () => {
    expectOneLineError(await keys(['revoke', 'key_ffffffffffffffff']), /No key "key_ffffffffffffffff" in staging \(PetStore-Staging\)/);
  });
});
