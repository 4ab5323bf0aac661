import { DeleteCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { deploymentCheckKey } from '../../definitions/deployment-check';
import { businessMetrics } from '../../definitions/metrics';
import type { OperationId } from '../../definitions/routes';
import { createHandler as createAuthorizer } from '../../functions/authorizer/handler';
import { createHandler as createPetHandler } from '../../functions/create-pet/handler';
import { CustomerTable, customerKey, hashApiKey } from '../../functions/customers';
import type { AwsCalls } from '../../functions/deployment-check/aws-calls';
import type { CheckTargets, Invocation } from '../../functions/deployment-check/check';
import { createHandler as createCheck } from '../../functions/deployment-check/handler';
import { createHandler as getPetHandler } from '../../functions/get-pet/handler';
import { toAuthorizerContext } from '../../functions/http/caller';
import { createHandler as listPetsHandler } from '../../functions/list-pets/handler';
import { createDocumentClient, type Dependencies, DYNAMODB_CALL_BUDGET } from '../../functions/runtime/dependencies';
import { localCredentials } from '../../local/local-api';
import { lambdaContext, restProxyEvent } from '../support/api-gateway-events';
import { beforeGetPetSunset, createTestTables, testDependencies, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';
import { captureMetrics } from '../support/metrics';

/**
 * The pre-traffic check run against the real handlers on DynamoDB Local, as
 * Lambda's Invoke would run them: it stores its own key, the real authorizer
 * lets it through with a metering key of its own, every operation answers,
 * and it reports Succeeded; one broken version, and it reports Failed. Its
 * calls never count as a customer's (PetsCreated, ClientErrors).
 */
let dependencies: Dependencies;
const SECRET = 'S3cretOfTheCheck0123456789abcdefghijklmnopq'.slice(0, 43);
const METERING_KEY = 'checkmeteringkey0123456789';

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables(), () => beforeGetPetSunset);
});

type Handler = (event: never, context: Context) => Promise<unknown>;

/** Lambda's Invoke, in process: a qualified ARN names the handler; a thrown error comes back as a function error. */
function invokeOf(handlers: Record<string, Handler>) {
  const called: string[] = [];
  const invoke = async (arn: string, event: unknown): Promise<Invocation> => {
    called.push(arn);
    const handler = handlers[arn];
    if (!handler) throw new Error(`no function ${arn}`);
    try {
      return { payload: JSON.parse(JSON.stringify(await handler(event as never, lambdaContext(arn)))) };
    } catch (error) {
      return { functionError: 'Unhandled', payload: { errorType: 'Error', errorMessage: (error as Error).message } };
    }
  };
  return { invoke, called };
}

const arn = (name: string, qualifier: string) => `arn:aws:lambda:eu-west-1:123456789012:function:${name}:${qualifier}`;
const names: Record<OperationId | 'authorizer', string> = {
  authorizer: 'Authorizer',
  listPets: 'ListPets',
  createPet: 'CreatePet',
  getPet: 'GetPet',
};
const targets: CheckTargets = {
  authorizer: { version: arn(names.authorizer, '2'), live: arn(names.authorizer, 'live') },
  operations: Object.fromEntries(
    (['listPets', 'createPet', 'getPet'] as const).map((id) => [id, { version: arn(names[id], '2'), live: arn(names[id], 'live') }]),
  ) as CheckTargets['operations'],
};

function handlersFor(deps: Dependencies, createPetDeps: Dependencies = deps): Record<string, Handler> {
  const versions = {
    authorizer: createAuthorizer(deps),
    listPets: listPetsHandler(deps),
    createPet: createPetHandler(createPetDeps),
    getPet: getPetHandler(deps),
  } as Record<string, Handler>;
  return Object.fromEntries(
    Object.entries(names).flatMap(([id, name]) => [
      [arn(name, '2'), versions[id]!],
      [arn(name, 'live'), versions[id]!],
    ]),
  );
}

function callsWith(invoke: AwsCalls['invoke']) {
  const reports: string[] = [];
  const calls: AwsCalls = {
    invoke,
    secretString: async () => SECRET,
    reportHookStatus: async (_deployment, _execution, status) => {
      reports.push(status);
    },
  };
  return { calls, reports };
}

const settings = () => ({ secretArn: 'arn:secret', meteringKey: METERING_KEY, targets });
const hookEvent = { DeploymentId: 'd-TEST', LifecycleEventHookExecutionId: 'e-1' };

it('good versions: stores its key, is allowed by the real authorizer, calls every route, reports Succeeded; twice is fine', async () => {
  const { invoke, called } = invokeOf(handlersFor(dependencies));
  const { calls, reports } = callsWith(invoke);
  const { result: first, lines } = await captureMetrics(() => createCheck(calls, settings, () => dependencies)(hookEvent));
  expect(first.findings.map((finding) => [finding.target.split(':')[6], finding.verdict, finding.detail])).toEqual([
    ['Authorizer', 'ok', 'allowed the check key'],
    ['ListPets', 'ok', 'answered 200'],
    ['CreatePet', 'ok', 'answered 201'],
    ['GetPet', 'ok', 'answered 200'],
  ]);
  expect(reports).toEqual(['Succeeded']);
  expect(called.every((target) => target.endsWith(':2'))).toBe(true);
  // Never counted as a customer: no PetsCreated, no ClientErrors for its key.
  for (const line of lines) {
    expect(line).not.toHaveProperty(businessMetrics.names.petsCreated);
    expect(line).not.toHaveProperty(businessMetrics.names.clientErrors);
  }
  // Its key: an Enterprise key of its own, metered by its own API Gateway key.
  const record = await new CustomerTable(dependencies.db, dependencies.tableNames).findByHash(hashApiKey(`psk_${SECRET}`));
  expect(record).toMatchObject({ plan: 'enterprise', meteringKey: METERING_KEY });
  expect(record?.keyId).toMatch(new RegExp(`^${deploymentCheckKey.keyIdPrefix}[0-9a-f]{12}$`));
  const allowed = (
    await invoke(targets.authorizer.version, {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:r:a:api/v1/GET/pets',
      headers: { Authorization: `Bearer psk_${SECRET}` },
    })
  ).payload as { usageIdentifierKey: string };
  expect(allowed.usageIdentifierKey).toBe(METERING_KEY);
  // The hook runs once per deployment group: the same version's create is replayed (its Idempotency-Key), not repeated.
  const second = await createCheck(calls, settings, () => dependencies)(hookEvent);
  expect(second.passed).toBe(true);
  expect(reports).toEqual(['Succeeded', 'Succeeded']);
});

it('a createPet version that answers 500: reports Failed, so CodeDeploy stops the deployment before any client reaches it', async () => {
  const broken = Object.create(dependencies.db) as Dependencies['db'];
  const send = dependencies.db.send.bind(dependencies.db) as (command: object) => Promise<unknown>;
  broken.send = (async (command: object) => {
    if (command instanceof PutCommand && command.input.TableName === dependencies.tableNames.pets) throw new TypeError('a bug');
    return send(command);
  }) as Dependencies['db']['send'];
  // A version of its own (3): its Idempotency-Key is new, so its create really runs.
  const handlers = {
    ...handlersFor(dependencies),
    [arn(names.createPet, '3')]: createPetHandler({ ...dependencies, db: broken }) as Handler,
  };
  const { invoke } = invokeOf(handlers);
  const { calls, reports } = callsWith(invoke);
  const brokenTargets = {
    ...targets,
    operations: { ...targets.operations, createPet: { version: arn(names.createPet, '3'), live: arn(names.createPet, 'live') } },
  };
  // Its metric lines are captured (the first test switched the metrics on), not printed.
  const { result: report } = await captureMetrics(() =>
    createCheck(
      calls,
      () => ({ ...settings(), targets: brokenTargets }),
      () => dependencies,
    )({ ...hookEvent, LifecycleEventHookExecutionId: 'e-2' }),
  );
  expect(report.passed).toBe(false);
  expect(report.findings.find((finding) => finding.verdict === 'failed')?.detail).toMatch(/^answered 500/);
  expect(reports).toEqual(['Failed']);
});

it('during a DynamoDB slowdown both the new and the live versions answer 503: the check passes, so the fix for it can deploy', async () => {
  const proxy = await DynamoDbFaultProxy.start(testEndpoint());
  try {
    // Every DynamoDB answer comes after the SDK's 1 s timeout, on both attempts, for every function alike.
    proxy.inject({ kind: 'late', times: 1_000, delayMs: 1_200 });
    const slow: Dependencies = {
      ...dependencies,
      db: createDocumentClient({ endpoint: proxy.endpoint, region: 'local', budget: DYNAMODB_CALL_BUDGET, ...localCredentials() }),
    };
    const { invoke } = invokeOf(handlersFor(slow));
    const { calls, reports } = callsWith(invoke);
    const { result: report } = await captureMetrics(() =>
      createCheck(calls, settings, () => dependencies)({ ...hookEvent, LifecycleEventHookExecutionId: 'e-3' }),
    );
    expect(report.findings.map((finding) => finding.verdict)).toEqual(['shared', 'shared', 'shared', 'shared']);
    expect(report.passed).toBe(true);
    expect(reports).toEqual(['Succeeded']);
  } finally {
    proxy.clear();
    await proxy.close();
  }
}, 90_000);

describe('what a customer sees after the check has run', () => {
  const customer = toAuthorizerContext({
    keyId: 'key_0123456789abcdef',
    customerId: 'key_0123456789abcdef',
    plan: 'business',
    limits: { perMinute: 600, perDay: 100_000 },
  });
  type Answer = { statusCode: number; body: string; headers?: Record<string, string> };
  const call = (handler: Handler, request: Parameters<typeof restProxyEvent>[0]) =>
    handler(restProxyEvent({ ...request, authorizer: customer }) as never, lambdaContext()) as Promise<Answer>;

  /** Every pet id of a walk by the customer, a page of `limit` at a time, following X-Next-Cursor. */
  async function walk(listPets: Handler, query: Record<string, string>): Promise<number[]> {
    const ids: number[] = [];
    let cursor: string | undefined;
    do {
      const answer = await call(listPets, {
        method: 'GET',
        resource: '/pets',
        path: '/pets',
        query: { ...query, ...(cursor ? { cursor } : {}) },
      });
      expect(answer.statusCode).toBe(200);
      ids.push(...(JSON.parse(answer.body) as { id: number }[]).map((pet) => pet.id));
      cursor = answer.headers?.['X-Next-Cursor'];
    } while (cursor);
    return ids;
  }

  it('shows nothing the check made: no list (filtered or not), cursor walk or get by a customer key', async () => {
    const handlers = handlersFor(dependencies);
    const createPet = handlers[arn(names.createPet, '2')] as Handler;
    const mine: number[] = [];
    for (const status of ['available', 'sold', 'sold']) {
      const body = JSON.stringify({ name: `Customer pet ${status}`, categoryId: 1, status });
      const answer = await call(createPet, {
        method: 'POST',
        resource: '/pets',
        path: '/pets',
        body,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(answer.statusCode).toBe(201);
      mine.push((JSON.parse(answer.body) as { id: number }).id);
    }
    // The check runs on the same function instances the customer is served by (their views of the lists included).
    const { invoke } = invokeOf(handlers);
    const { calls } = callsWith(invoke);
    const { result: report } = await captureMetrics(() =>
      createCheck(calls, settings, () => dependencies)({ ...hookEvent, LifecycleEventHookExecutionId: 'e-4' }),
    );
    expect(report.passed).toBe(true);
    const { Items = [] } = await dependencies.db.send(
      new ScanCommand({
        TableName: dependencies.tableNames.pets,
        FilterExpression: '#name = :name',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':name': deploymentCheckKey.petName },
      }),
    );
    const made = Items.map((item) => Number(item.id));
    expect(made.length).toBeGreaterThan(0);

    const listPets = handlers[arn(names.listPets, '2')] as Handler;
    const queries: Record<string, string>[] = [
      { limit: '1' },
      { limit: '100' },
      { limit: '1', status: 'sold' },
      { limit: '100', status: 'sold' },
    ];
    for (const query of queries) {
      const ids = await walk(listPets, query);
      // The customer's own pets are there (the walk works), the check's are not.
      expect(ids).toEqual(expect.arrayContaining(query.status ? mine.slice(1) : mine));
      for (const id of made) expect(ids).not.toContain(id);
    }
    const getPet = handlers[arn(names.getPet, '2')] as Handler;
    for (const id of made) {
      const answer = await call(getPet, {
        method: 'GET',
        resource: '/pets/{petId}',
        path: `/pets/${id}`,
        pathParameters: { petId: String(id) },
      });
      expect(answer.statusCode).toBe(404);
    }
    expect(
      (
        await call(getPet, {
          method: 'GET',
          resource: '/pets/{petId}',
          path: `/pets/${mine[0]}`,
          pathParameters: { petId: String(mine[0]) },
        })
      ).statusCode,
    ).toBe(200);
  });
});

const keyHash = hashApiKey(`psk_${SECRET}`);
const keyTable = () => new CustomerTable(dependencies.db, dependencies.tableNames);
const recreatedId = new RegExp(`^${deploymentCheckKey.keyIdPrefix}[0-9a-f]{12}_[0-9a-f]{8}$`);
let execution = 10;

/** Runs the check with good versions: every call must succeed. */
async function runCheck(): Promise<void> {
  const { invoke } = invokeOf(handlersFor(dependencies));
  const { calls, reports } = callsWith(invoke);
  const { result } = await captureMetrics(() =>
    createCheck(calls, settings, () => dependencies)({ ...hookEvent, LifecycleEventHookExecutionId: `e-${execution++}` }),
  );
  expect(result.findings.map((finding) => [finding.verdict, finding.detail])).toEqual([
    ['ok', 'allowed the check key'],
    ['ok', 'answered 200'],
    ['ok', 'answered 201'],
    ['ok', 'answered 200'],
  ]);
  expect(reports).toEqual(['Succeeded']);
}

/** The check key as stored: it must work, as the check made it. */
async function storedKey() {
  const record = await keyTable().findByHash(keyHash);
  expect(record).toMatchObject({
    status: 'active',
    plan: 'enterprise',
    customLimits: deploymentCheckKey.limits,
    meteringKey: METERING_KEY,
  });
  return record!;
}

/**
 * The check key is a record like a customer's: revoked by hand (or by a key
 * tool of before it refused the check's key), the authorizer would refuse it
 * and every later check would fail, rolling back every deployment. So the check
 * re-creates it when it finds it revoked or gone.
 */
describe('the check key revoked or gone: the next check re-creates it, and its calls succeed', () => {
  it('revoked by hand, directly in DynamoDB: re-created under an id of its own, of the same customer', async () => {
    await runCheck();
    const before = await storedKey();
    await dependencies.db.send(
      new UpdateCommand({
        TableName: dependencies.tableNames.apiKeys,
        Key: { keyHash },
        UpdateExpression: 'SET #status = :revoked',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked' },
      }),
    );
    await runCheck();
    const after = await storedKey();
    expect(after.keyId).toMatch(recreatedId);
    expect(after.customerId).toBe(before.customerId);
  });

  it('revoked as the key tool revokes (its mark on the counters, which every function checks): re-created, its calls succeed', async () => {
    const revoked = await storedKey();
    await keyTable().revoke(revoked, new Date(dependencies.clock()).toISOString());
    await runCheck();
    const after = await storedKey();
    expect(after.keyId).toMatch(recreatedId);
    expect(after.keyId).not.toBe(revoked.keyId);
  });

  it('its secret deleted, then its customer: re-created each time', async () => {
    await dependencies.db.send(new DeleteCommand({ TableName: dependencies.tableNames.apiKeys, Key: { keyHash } }));
    await runCheck();
    const { customerId } = await storedKey();
    await dependencies.db.send(
      new DeleteCommand({ TableName: dependencies.tableNames.apiKeys, Key: { keyHash: customerKey(customerId) } }),
    );
    await runCheck();
    expect((await storedKey()).customerId).toBe(customerId);
  });
});
