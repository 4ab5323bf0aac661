import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { CustomerTable, hashApiKey } from '../../functions/customers';
import { counterKey, windowsAt } from '../../functions/rate-limit/testing';
import { type Dependencies, DYNAMODB_CALL_BUDGET } from '../../functions/runtime/dependencies';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { TestClock, testDependencies, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';

/**
 * The rate limiter through the project's DynamoDB fault proxy, with the
 * deployed call budget (1 s request timeout, 2 attempts): each fault gives the
 * answer docs/clients.md promises, and after each the counters hold exactly the
 * requests those rules charge (a 2xx or 429 is charged; a 503 is not).
 */
let proxy: DynamoDbFaultProxy;
let api: TestApi;
/** Reads the counters straight from DynamoDB Local, past the proxy. */
let direct: Dependencies;

beforeAll(async () => {
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
  api = await startTestApi({ dynamoEndpoint: proxy.endpoint, dynamoCallBudget: DYNAMODB_CALL_BUDGET, clock: new TestClock() });
  direct = testDependencies(api.dependencies.tableNames);
});
afterAll(async () => {
  await proxy.settled();
  direct.db.destroy();
  await api.close();
  await proxy.close();
});
afterEach(() => proxy.clear());

/** The key the current test of a table sends with. */
let currentKey: string;
const rateLimits = () => api.dependencies.tableNames.rateLimits;

/** The key's counter item of today (shard 0: every fixed plan and small enterprise key has one item). */
async function countersOf(key: string) {
  const keyId = await keyIdOf(key);
  const { Item } = await direct.db.send(
    new GetCommand({ TableName: rateLimits(), Key: { pk: counterKey(keyId, windowsAt(api.clock.now).day) }, ConsistentRead: true }),
  );
  return { minuteGranted: Item?.minuteGranted, dayGranted: Item?.dayGranted, refusedCount: Item?.refusedCount };
}

async function keyIdOf(key: string): Promise<string> {
  const record = await new CustomerTable(direct.db, api.dependencies.tableNames).findByHash(hashApiKey(key));
  if (!record) throw new Error('test key not found');
  return record.keyId;
}

async function codeOf(response: Response): Promise<string> {
  return ((await response.clone().json()) as { code: string }).code;
}

describe('TransactionConflictException on the count (#21 defect 2: a key-tool transaction holds the counter item)', () => {
  it.each([
    ['listPets', () => api.call('/pets', { key: currentKey })],
    ['createPet', () => api.call('/pets', { key: currentKey, ...postJson({ name: 'Conflicted', categoryId: 1 }) })],
  ])('%s: retried with backoff, then served and counted once', async (_name, send) => {
    currentKey = await api.issueKey('pro');
    // Three conflicts in a row, as a transaction of a few tens of milliseconds would give.
    proxy.inject({ kind: 'transactionConflict', operation: 'UpdateItem', table: rateLimits(), times: 3 });
    const response = await send();
    expect(response.status).toBeLessThan(300);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('299');
    expect(proxy.calls.filter((call) => call.fault === 'transactionConflict')).toHaveLength(3);
    expect(await countersOf(currentKey)).toMatchObject({ minuteGranted: 1, dayGranted: 1 });
  });

  it('answers 503 with Retry-After, never 500, when the item stays held past the retries, and charges nothing', async () => {
    const key = await api.issueKey('pro');
    proxy.inject({ kind: 'transactionConflict', operation: 'UpdateItem', table: rateLimits(), times: 50 });
    const response = await api.call('/pets', { key });
    expect(response.status).toBe(503);
    expect(await codeOf(response)).toBe('service_unavailable');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    proxy.clear();
    expect(await countersOf(key)).toEqual({ minuteGranted: undefined, dayGranted: undefined, refusedCount: undefined });
    // The next request is the first one charged.
    expect((await api.call('/pets', { key })).headers.get('x-ratelimit-remaining')).toBe('299');
  });
});

describe('a count whose first attempt reaches DynamoDB after the SDK retry (#21 defect 5)', () => {
  it('counts 2 requests as 2 when the late attempt lands after the retry and another request', async () => {
    const key = await api.issueKey('pro');
    // Held 2.5 s: the SDK gives up after its 1 s request timeout and sends the count again.
    proxy.inject({ kind: 'slowForward', operation: 'UpdateItem', table: rateLimits(), delayMs: 2_500 });
    const first = await api.call('/pets', { key });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('299');
    const second = await api.call('/pets', { key });
    expect(second.headers.get('x-ratelimit-remaining')).toBe('298');
    await proxy.settled();
    expect(proxy.calls.filter((call) => call.fault === 'slowForward')).toHaveLength(1);
    expect(await countersOf(key)).toMatchObject({ minuteGranted: 2, dayGranted: 2 });
  });

  it('charges nothing for a 503 whose count was refunded before its first attempt landed late', async () => {
    const key = await api.issueKey('pro');
    proxy.inject(
      { kind: 'slowForward', operation: 'UpdateItem', table: rateLimits(), delayMs: 2_500 },
      // The read fails on both attempts: the request answers 503 and its charge is taken back.
      { kind: 'throughput', operation: 'Query', table: api.dependencies.tableNames.pets, times: 2 },
    );
    const failed = await api.call('/pets', { key });
    expect(failed.status).toBe(503);
    const next = await api.call('/pets', { key });
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining')).toBe('299');
    await proxy.settled();
    expect(await countersOf(key)).toMatchObject({ minuteGranted: 1, dayGranted: 1 });
  });
});

describe('a refusal whose bookkeeping write fails (#21 defect 7)', () => {
  it('stays a 429 with its rate-limit headers, and the refusal is recorded with the next one', async () => {
    const key = await api.issueKey('enterprise', { perMinute: 2, perDay: 1_000 });
    for (let served = 0; served < 2; served++) expect((await api.call('/pets', { key })).status).toBe(200);
    // The refused request's count fails its condition (a write DynamoDB answers), then its refusal is recorded: throttled twice.
    // Aimed at the refusal's write by what it names, so that a slow answer to the count, retried, is not the one throttled.
    proxy.inject({ kind: 'throttling', operation: 'UpdateItem', table: rateLimits(), bodyIncludes: 'refusedCount', times: 2 });
    const refused = await api.call('/pets', { key });
    expect(refused.status).toBe(429);
    expect(await codeOf(refused)).toBe('rate_limited');
    const minuteEnd = windowsAt(api.clock.now).minuteEnd;
    expect({
      limit: refused.headers.get('x-ratelimit-limit'),
      remaining: refused.headers.get('x-ratelimit-remaining'),
      reset: refused.headers.get('x-ratelimit-reset'),
    }).toEqual({ limit: '2', remaining: '0', reset: String(minuteEnd) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(proxy.calls.filter((call) => call.fault === 'throttling')).toHaveLength(2);
    expect(await countersOf(key)).toEqual({ minuteGranted: 2, dayGranted: 2, refusedCount: undefined });
    // The next refusal records both: the ban threshold (2, the per-minute limit) is reached.
    const banned = await api.call('/pets', { key });
    expect(await codeOf(banned)).toBe('key_suspended');
    expect(await countersOf(key)).toEqual({ minuteGranted: 2, dayGranted: 2, refusedCount: 2 });
  });
});
