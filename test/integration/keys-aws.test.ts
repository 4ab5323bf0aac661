import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { WRITE_RETRY_DELAYS_MS } from '../../admin/key-admin';
import { openTargetFor, runKeysCli } from '../../admin/keys-cli';
import type { PlanName } from '../../definitions/plans';
import type { TableName } from '../../definitions/tables';
import { usagePlanLimits } from '../../definitions/usage-plan-limits';
import { ApiKeyRepository } from '../../functions/data/api-key-repository';
import type { ApiKeyRecord } from '../../functions/domain/api-keys';
import { localCredentials } from '../../local/local-api';
import { createTestTables, TestClock, testEndpoint } from '../support/dynamo';
import { FakeApiGateway, serviceError } from '../support/fake-api-gateway';

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

let clock: TestClock;
let tableNames: Record<TableName, string>;
let dynamoDb: DynamoDBClient;
let keysTable: ApiKeyRepository;
let cloudFormation: CloudFormationClient;
let cloudFormationMock: AwsClientStub<CloudFormationClient>;
let gateway: FakeApiGateway;
/** Every API Gateway and DynamoDB write (successful or not), in order. */
let writes: string[];
/** DynamoDB commands whose next calls fail: as many as the key tool tries a write (then it reads back). */
let dynamoFaults: Map<string, number>;
const failDynamo = (command: string) => dynamoFaults.set(command, 1 + WRITE_RETRY_DELAYS_MS.length);

const dynamoWrites = new Set(['PutItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand', 'DeleteItemCommand']);

beforeEach(async () => {
  clock = new TestClock();
  tableNames = await createTestTables();
  writes = [];
  dynamoFaults = new Map();
  dynamoDb = new DynamoDBClient({ endpoint: testEndpoint(), region: 'local', ...localCredentials() });
  dynamoDb.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
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
  keysTable = new ApiKeyRepository(DynamoDBDocumentClient.from(dynamoDb), tableNames.apiKeys);

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
        ],
      },
    ],
  });

  const apiGateway = new APIGatewayClient({ region: 'eu-west-1', ...fakeCredentials });
  gateway = new FakeApiGateway(apiGateway, (command) => writes.push(command));
  for (const [plan, id] of Object.entries(fixedPlanIds)) gateway.addStackPlan(id, `petstore-staging-${plan}`, REST_API_ID, 'v1');
  clients = { cloudFormation, apiGateway, dynamoDb };
});

let clients: { cloudFormation: CloudFormationClient; apiGateway: APIGatewayClient; dynamoDb: DynamoDBClient };

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

async function keys(args: string[], stage = 'staging'): Promise<Run> {
  const run: Run = { code: -1, stdout: '', stderr: '' };
  run.code = await runKeysCli([...args, '--stage', stage], {
    clock: clock.read,
    out: (text) => {
      run.stdout += text;
    },
    err: (text) => {
      run.stderr += text;
    },
    openTarget: openTargetFor({ awsClients: clients }),
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

const apiKeyName = (record: ApiKeyRecord) => `petstore-staging-${record.keyId}`;
const ownPlanName = (record: ApiKeyRecord) => `petstore-staging-enterprise-${record.keyId}`;

/**
 * DynamoDB and API Gateway agree: every key that is not revoked is metered by
 * an enabled API key (value = its meteringKey) in exactly its plan's usage
 * plan (an Enterprise key: its own, with limits derived from the key's); a
 * revoked key is metered by nothing; nothing else exists in API Gateway.
 */
async function expectAgreement(): Promise<void> {
  const records = await keysTable.scanAll();
  const metered = records.filter((record) => record.status !== 'revoked');
  for (const record of metered) {
    const apiKey = gateway.keyNamed(apiKeyName(record));
    expect(apiKey).toMatchObject({ value: record.meteringKey, enabled: true });
    const plans = gateway.plansOf(apiKey!.id);
    expect(plans).toHaveLength(1);
    if (record.plan === 'enterprise') {
      const derived = usagePlanLimits(record.customLimits!);
      expect(plans[0]).toMatchObject({
        name: ownPlanName(record),
        apiStages: [{ apiId: REST_API_ID, stage: 'v1' }],
        throttle: { rateLimit: derived.rateLimit, burstLimit: derived.burstLimit },
        quota: { limit: derived.dailyQuota, period: 'DAY' },
      });
    } else {
      expect(plans[0]!.id).toBe(fixedPlanIds[record.plan]);
    }
  }
  expect([...gateway.apiKeys.values()].map((key) => key.name).sort()).toEqual(metered.map(apiKeyName).sort());
  const ownPlans = [...gateway.usagePlans.values()].filter((plan) => !Object.values(fixedPlanIds).includes(plan.id));
  expect(ownPlans.map((plan) => plan.name).sort()).toEqual(
    metered
      .filter((record) => record.plan === 'enterprise')
      .map(ownPlanName)
      .sort(),
  );
}

describe('issue', () => {
  it('creates the API Gateway key and its usage plan membership first, from the stack outputs, then the DynamoDB record', async () => {
    const record = await issue('pro');
    expect(cloudFormationMock.commandCalls(DescribeStacksCommand)[0]!.args[0].input).toEqual({ StackName: 'PetStore-Staging' });
    expect(gateway.mock.commandCalls(CreateApiKeyCommand)[0]!.args[0].input).toMatchObject({
      name: apiKeyName(record),
      value: record.meteringKey,
      enabled: true,
    });
    const apiKey = gateway.keyNamed(apiKeyName(record))!;
    expect(gateway.mock.commandCalls(CreateUsagePlanKeyCommand)[0]!.args[0].input).toEqual({
      usagePlanId: fixedPlanIds.pro,
      keyId: apiKey.id,
      keyType: 'API_KEY',
    });
    expect(writes).toEqual(['CreateApiKeyCommand', 'CreateUsagePlanKeyCommand', 'PutItemCommand']);
    await expectAgreement();
  });

  it('gives an Enterprise key a usage plan of its own on the REST API stage v1, with limits derived from its own', async () => {
    const record = await issue('enterprise', ['--per-minute', '6000', '--per-day', '5000000']);
    expect(gateway.mock.commandCalls(CreateUsagePlanCommand)[0]!.args[0].input).toMatchObject({
      name: ownPlanName(record),
      apiStages: [{ apiId: REST_API_ID, stage: 'v1' }],
      throttle: { rateLimit: 200, burstLimit: 12_000 },
      quota: { limit: 10_000_000, period: 'DAY' },
    });
    await expectAgreement();
  });

  it('leaves nothing behind when API Gateway fails before the DynamoDB write', async () => {
    gateway.failNext(CreateUsagePlanKeyCommand);
    expectOneLineError(await keys(['issue', '--plan', 'pro', '--owner', 'Acme Ltd']), /CreateUsagePlanKey failed/);
    expect(gateway.mock.commandCalls(DeleteApiKeyCommand)).toHaveLength(1);
    expect(writes).not.toContain('PutItemCommand');
    expect(await keysTable.scanAll()).toEqual([]);
    await expectAgreement();
  });

  it('deletes the API Gateway key and usage plan again when the DynamoDB write fails', async () => {
    failDynamo('PutItemCommand');
    expectOneLineError(
      await keys(['issue', '--plan', 'enterprise', '--owner', 'Acme Ltd', '--per-minute', '100', '--per-day', '1000']),
      /DynamoDB did not answer .*nothing was written/,
    );
    expect(gateway.apiKeys.size).toBe(0);
    expect(await keysTable.scanAll()).toEqual([]);
    await expectAgreement();
  });

  it('names what is left to do by hand when even the undo fails', async () => {
    failDynamo('PutItemCommand');
    gateway.failNext(DeleteApiKeyCommand);
    const run = await keys(['issue', '--plan', 'free', '--owner', 'Acme Ltd']);
    expectOneLineError(
      run,
      /Undoing the API Gateway change failed too: still to do by hand in API Gateway: delete API key petstore-staging-key_\w+/,
    );
  });
});

describe('set-plan', () => {
  it('moves the API key from one usage plan to the other (leaving first: one plan per stage)', async () => {
    const record = await issue('pro');
    writes = [];
    expect((await keys(['set-plan', record.keyId, 'business'])).code).toBe(0);
    expect(writes).toEqual(['DeleteUsagePlanKeyCommand', 'CreateUsagePlanKeyCommand', 'TransactWriteItemsCommand']);
    expect((await keysTable.findById(record.keyId))!.plan).toBe('business');
    await expectAgreement();
  });

  it('puts the API key back in its usage plan when the DynamoDB write fails', async () => {
    const record = await issue('pro');
    failDynamo('TransactWriteItemsCommand');
    expectOneLineError(await keys(['set-plan', record.keyId, 'free']), /DynamoDB did not answer/);
    expect((await keysTable.findById(record.keyId))!.plan).toBe('pro');
    await expectAgreement();
  });

  it('leaves the old usage plan intact when API Gateway fails halfway through the move', async () => {
    const record = await issue('pro');
    gateway.failNext(CreateUsagePlanKeyCommand);
    expectOneLineError(await keys(['set-plan', record.keyId, 'business']), /CreateUsagePlanKey failed/);
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
    expect(gateway.planNamed(ownPlanName(record))).toBeUndefined();
    await expectAgreement();
  });
});

describe('rotate', () => {
  it("meters the successor with an API key of its own in the same usage plan; the old one's stays until revoked", async () => {
    const record = await issue('business');
    const run = await keys(['rotate', record.keyId, '--grace', '1h', '--json']);
    expect(run.code).toBe(0);
    const successor = (await keysTable.findById((JSON.parse(run.stdout) as { keyId: string }).keyId))!;
    expect(successor).toMatchObject({ plan: 'business', owner: 'Acme Ltd', status: 'active' });
    expect(gateway.plansOf(gateway.keyNamed(apiKeyName(successor))!.id).map((plan) => plan.id)).toEqual([fixedPlanIds.business]);
    expect((await keysTable.findById(record.keyId))!.expiresAt).toBe(new Date(clock.now + 3_600_000).toISOString());
    await expectAgreement();
  });

  it('deletes the successor API key when the DynamoDB transaction fails, and leaves the old key untouched', async () => {
    const record = await issue('pro');
    failDynamo('TransactWriteItemsCommand');
    expectOneLineError(await keys(['rotate', record.keyId]), /DynamoDB did not answer/);
    expect(await keysTable.findById(record.keyId)).toEqual(record);
    expect(await keysTable.scanAll()).toHaveLength(1);
    await expectAgreement();
  });
});

describe('revoke', () => {
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

  it('restores the API key when the DynamoDB write fails: the key stays active and metered', async () => {
    const record = await issue('pro');
    failDynamo('TransactWriteItemsCommand');
    expectOneLineError(await keys(['revoke', record.keyId]), /DynamoDB did not answer/);
    expect((await keysTable.findById(record.keyId))!.status).toBe('active');
    await expectAgreement();
  });

  it('changes nothing when API Gateway fails before the DynamoDB write', async () => {
    const record = await issue('pro');
    gateway.failNext(DeleteUsagePlanKeyCommand);
    expectOneLineError(await keys(['revoke', record.keyId]), /DeleteUsagePlanKey failed/);
    expect(await keysTable.findById(record.keyId)).toEqual(record);
    await expectAgreement();
  });

  it('reports unfinished clean-up as a warning, and a second revoke finishes it', async () => {
    const record = await issue('pro');
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
