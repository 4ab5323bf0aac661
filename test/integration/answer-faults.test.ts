import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { functionTimeoutSeconds } from '../../definitions/routes';
import { DYNAMODB_CALL_BUDGET, TIME_BUDGET_GUARD_MS } from '../../functions/runtime/dependencies';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { beforeGetPetSunset, TestClock, testDocumentClient, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy, type FaultRule } from '../support/dynamodb-fault-proxy';

/**
 * Faults on the answer of a DynamoDB call that landed — reset halfway through
 * the body, stalled after the headers, a truncated body, a 500 after the write —
 * through real HTTP with the deployed SDK budget (1 s per attempt, 2 attempts):
 * each answer is a 503 that says what the client can know (never a 500, never
 * "nothing was changed" beside a pet that was made), it comes before the
 * function's timeout minus its guard, and the counters charge exactly the
 * requests docs/clients.md says are charged (every request but a 429 or a 503).
 */
const FREE_PER_MINUTE = 60;
/** The latest any answer may come: the function's timeout minus the time-budget guard. */
const LATEST_ANSWER_MS = functionTimeoutSeconds * 1000 - TIME_BUDGET_GUARD_MS;

let proxy: DynamoDbFaultProxy;
let api: TestApi;
let direct: DynamoDBDocumentClient;

beforeAll(async () => {
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
  api = await startTestApi({ dynamoEndpoint: proxy.endpoint, dynamoCallBudget: DYNAMODB_CALL_BUDGET, authorizerCacheTtlSeconds: 0 });
  direct = testDocumentClient();
});
afterAll(async () => {
  await api.close();
  await proxy.close();
  direct.destroy();
});
afterEach(() => {
  proxy.clear();
  api.clock.now = new TestClock().now;
});

interface Answer {
  status: number;
  body: { id?: number; name?: string; code?: string; message?: string };
  elapsedMs: number;
}

async function send(path: string, key: string, init: RequestInit = {}): Promise<Answer> {
  const started = Date.now();
  const response = await api.call(path, { ...init, key });
  return { status: response.status, body: (await response.json()) as Answer['body'], elapsedMs: Date.now() - started };
}

const tables = () => api.dependencies.tableNames;
const withKey = (body: unknown, idempotencyKey: string): RequestInit => {
  const init = postJson(body);
  return { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': `"${idempotencyKey}"` } };
};

async function petsNamed(name: string): Promise<{ id: number }[]> {
  const { Items = [] } = await direct.send(
    new ScanCommand({
      TableName: tables().pets,
      FilterExpression: '#name = :name',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: { ':name': name },
    }),
  );
  return Items as { id: number }[];
}

/** One clean request after the faults: its X-RateLimit-Remaining shows exactly the requests charged. */
async function expectChargedExactly(key: string, answers: Answer[]): Promise<void> {
  proxy.clear();
  const response = await api.call('/pets?limit=1', { key });
  expect(response.status).toBe(200);
  const charged = answers.filter((answer) => answer.status !== 429 && answer.status !== 503).length + 1;
  expect(Number(response.headers.get('x-ratelimit-remaining'))).toBe(FREE_PER_MINUTE - charged);
}

/** Both SDK attempts of the call get this fault. */
const onBothAttempts = (rule: Omit<FaultRule, 'times'>): FaultRule => ({ ...rule, times: 2 });

describe('#21 defect 1: a reset or a truncated body while the answer is read', () => {
  it.each(['resetMidAnswer', 'truncatedBody'] as const)(
    '%s on both attempts of an unkeyed create: 503 "unknown whether the pet was created", never a 500 "nothing was changed"',
    async (kind) => {
      const key = await api.issueKey('free');
      const name = `unkeyed-${kind}`;
      proxy.inject(onBothAttempts({ kind, operation: 'PutItem', table: tables().pets }));
      const answer = await send('/pets', key, postJson({ name, categoryId: 1 }));
      expect(answer.status).toBe(503);
      expect(answer.body.message).toMatch(/unknown whether the pet was created.*Idempotency-Key/);
      // The write landed: exactly one pet, and nothing claims otherwise.
      expect(await petsNamed(name)).toHaveLength(1);
      await expectChargedExactly(key, [answer]);
    },
  );

  it('resetMidAnswer on both attempts of a keyed claim: 503 "may have been created", and a retry at once gets the pet', async () => {
    const key = await api.issueKey('free');
    proxy.inject(onBothAttempts({ kind: 'resetMidAnswer', operation: 'PutItem', table: tables().idempotency }));
    const first = await send('/pets', key, withKey({ name: 'keyed-reset', categoryId: 1 }, 'reset-1'));
    expect(first.status).toBe(503);
    expect(first.body.message).toMatch(/may have been created/);
    const retry = await send('/pets', key, withKey({ name: 'keyed-reset', categoryId: 1 }, 'reset-1'));
    expect(retry.status).toBe(201);
    expect((await petsNamed('keyed-reset')).map((pet) => Number(pet.id))).toEqual([retry.body.id]);
    await expectChargedExactly(key, [first, retry]);
  });

  it.each([
    ['list', 'Query', '/pets?limit=2'],
    ['get', 'GetItem', '/pets/1'],
  ])('resetMidAnswer on both attempts of %s: 503 "nothing was changed" (a read), not 500', async (_name, operation, path) => {
    api.clock.now = beforeGetPetSunset;
    const key = await api.issueKey('free');
    proxy.inject(onBothAttempts({ kind: 'resetMidAnswer', operation, table: tables().pets }));
    const answer = await send(path, key);
    expect(answer).toMatchObject({ status: 503, body: { code: 'service_unavailable' } });
    expect(answer.body.message).toMatch(/nothing was changed/);
  });
});

describe('#21 defect 3: an answer that sends its headers, then stalls', () => {
  // Before the fix these waited for the client's socket timeout (minutes) or the gateway's 29 s.
  const slowTest = 40_000;

  it.each([
    ['a create (the pet write)', 'PutItem', () => tables().pets, '/pets'],
    ['a list (the query)', 'Query', () => tables().pets, '/pets?limit=2'],
    ["a create's rate-limit count", 'UpdateItem', () => tables().rateLimits, '/pets'],
  ])(
    'on both attempts of %s: 503 before the function timeout minus its guard',
    async (_name, operation, table, path) => {
      const key = await api.issueKey('free');
      proxy.inject(onBothAttempts({ kind: 'stallAfterHeaders', operation, table: table() }));
      const init = path === '/pets' ? postJson({ name: 'stalled', categoryId: 1 }) : {};
      const answer = await send(path, key, init);
      expect(answer.status).toBe(503);
      expect(answer.elapsedMs).toBeLessThan(LATEST_ANSWER_MS);
      expect(proxy.calls.some((call) => call.fault === 'stallAfterHeaders')).toBe(true);
    },
    slowTest,
  );

  it(
    "on both attempts of an uncached key's lookup in the authorizer: 503 before the authorizer's timeout",
    async () => {
      const key = await api.issueKey('free');
      proxy.inject(onBothAttempts({ kind: 'stallAfterHeaders', operation: 'GetItem', table: tables().apiKeys }));
      const answer = await send('/pets?limit=1', key);
      expect(answer).toMatchObject({ status: 503, body: { code: 'service_unavailable' } });
      expect(answer.elapsedMs).toBeLessThan(LATEST_ANSWER_MS);
    },
    slowTest,
  );
});

describe('#21 defect 6: idempotency windows', () => {
  it('a 201 whose COMPLETED mark failed on both attempts: an immediate replay gets the original 201', async () => {
    const key = await api.issueKey('free');
    proxy.inject(onBothAttempts({ kind: 'http500', operation: 'UpdateItem', table: tables().idempotency }));
    const first = await send('/pets', key, withKey({ name: 'unmarked', categoryId: 1 }, 'unmarked-1'));
    expect(first.status).toBe(201);
    expect(proxy.calls.filter((call) => call.fault === 'http500')).toHaveLength(2);
    const replay = await send('/pets', key, withKey({ name: 'unmarked', categoryId: 1 }, 'unmarked-1'));
    expect(replay).toMatchObject({ status: 201, body: { id: first.body.id, name: 'unmarked' } });
    expect(await petsNamed('unmarked')).toHaveLength(1);
    await expectChargedExactly(key, [first, replay]);
  });

  it('a claim that landed but whose answers were lost (503): a retry at once creates the pet, no 409', async () => {
    const key = await api.issueKey('free');
    proxy.inject(onBothAttempts({ kind: 'drop', operation: 'PutItem', table: tables().idempotency }));
    const first = await send('/pets', key, withKey({ name: 'claim-lost', categoryId: 1 }, 'claim-lost-1'));
    expect(first.status).toBe(503);
    expect(first.body.message).toMatch(/may have been created/);
    const retry = await send('/pets', key, withKey({ name: 'claim-lost', categoryId: 1 }, 'claim-lost-1'));
    expect(retry.status).toBe(201);
    expect((await petsNamed('claim-lost')).map((pet) => Number(pet.id))).toEqual([retry.body.id]);
    await expectChargedExactly(key, [first, retry]);
  });
});
