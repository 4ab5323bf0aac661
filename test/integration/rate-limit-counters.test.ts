import { CounterTable } from '../../functions/rate-limit';
import { windowsAt } from '../../functions/rate-limit/testing';
import { DYNAMODB_CALL_BUDGET } from '../../functions/runtime/dependencies';
import { startTestApi, type TestApi } from '../support/api';
import { createTestTables, TestClock, testDependencies, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';

/** The counters on DynamoDB Local: the ban counts the 429s answered, once each, and no window boundary breaks them. */

it('counts a refusal stamped just before a minute after one stamped just after it, without an error', async () => {
  const tableNames = await createTestTables();
  const dependencies = testDependencies(tableNames);
  const counters = new CounterTable(dependencies.db, tableNames.rateLimits);
  // Two containers whose clocks differ by 10 ms: the later stamp is written first.
  // A minute boundary tomorrow, from the real clock (no date the test depends on).
  const boundary = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000 + 12 * 3_600_000;
  const later = windowsAt(boundary + 5);
  const earlier = windowsAt(boundary - 5);
  const caller = { keyId: 'key_boundary', customerId: 'key_boundary' };
  const refusals = async (windows: typeof later, batchId: string) =>
    (await counters.write({ kind: 'refusals', caller, windows, instanceId: 'instance', refusals: 1, batchId })).state.refusedCount;
  expect(await refusals(later, 'request-1')).toBe(1);
  expect(await refusals(earlier, 'request-2')).toBe(2);
  // A repeat of the same request's write (the SDK's retry after a lost answer) is not a refusal more.
  expect(await refusals(earlier, 'request-2')).toBe(2);
  expect(await refusals(later, 'request-3')).toBe(3);
  dependencies.db.destroy();
});

const LATE_ATTEMPT_TIMEOUT_MS = 3_000;

describe('through a proxy that answers a refusal write late', () => {
  let proxy: DynamoDbFaultProxy;
  let api: TestApi;
  beforeAll(async () => {
    proxy = await DynamoDbFaultProxy.start(testEndpoint());
    // The functions' budget (two attempts), with more time per attempt than Lambda's: on a machine busy with the rest of
    // the suite an ordinary call may take over a second, and this test is about the late one only.
    const dynamoCallBudget = { ...DYNAMODB_CALL_BUDGET, requestTimeoutMs: LATE_ATTEMPT_TIMEOUT_MS };
    api = await startTestApi({ dynamoEndpoint: proxy.endpoint, dynamoCallBudget, clock: new TestClock() });
  });
  afterAll(async () => {
    await api.close();
    await proxy.close();
  });

  it('suspends the key at exactly its 3rd answered 429 (ban threshold 3), though the SDK wrote the 1st refusal twice', async () => {
    const key = await api.issueKey('enterprise', { perMinute: 3, perDay: 1_000 });
    for (let served = 0; served < 3; served++) expect((await api.call('/pets', { key })).status).toBe(200);
    // A refused request makes two writes on the counters: the count (refused by its condition), then the refusal.
    proxy.inject({
      kind: 'late',
      operation: 'UpdateItem',
      table: api.dependencies.tableNames.rateLimits,
      skip: 1,
      times: 1,
      // Past the first attempt's timeout: the SDK sends the refusal again, and the first lands too.
      delayMs: LATE_ATTEMPT_TIMEOUT_MS + 300,
    });
    const codes: string[] = [];
    for (let refused = 0; refused < 3; refused++) {
      const response = await api.call('/pets', { key });
      expect(response.status).toBe(429);
      codes.push(((await response.json()) as { code: string }).code);
    }
    expect(proxy.calls.filter((call) => call.fault === 'late')).toHaveLength(1);
    expect(codes).toEqual(['rate_limited', 'rate_limited', 'key_suspended']);
  });
});
