import { type ApiKeyRecord, CustomerTable, generateApiKey, limitsOf } from '../../functions/customers';
import { CounterTable, RateLimiter, UsageCounters } from '../../functions/rate-limit';
import { spareCap, windowsAt } from '../../functions/rate-limit/testing';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { createTestTables, testDependencies, testInstant } from '../support/dynamo';

/**
 * The customer is the unit of a plan (decision 14), as one function instance
 * counts it on DynamoDB Local: the secrets of a rotation and a plan changed
 * within the minute share one minute, and nothing held is lost on the way.
 * Each request carries the limits the authorizer would have answered for its
 * secret: the customer's, read from its record (cached for the whole minute).
 */
let dependencies: Dependencies;
let keys: CustomerTable;
let counters: CounterTable;

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
  keys = new CustomerTable(dependencies.db, dependencies.tableNames);
  counters = new CounterTable(dependencies.db, dependencies.tableNames.rateLimits);
});
afterAll(() => dependencies.db.destroy());

/** One request of a secret at `nowMs`: its headers' limit and remaining, or the code of its refusal. */
async function request(limiter: RateLimiter, secret: ApiKeyRecord, callerLimits: ReturnType<typeof limitsOf>, nowMs: number) {
  const decision = await limiter.admit({ keyId: secret.keyId, customerId: secret.customerId, limits: callerLimits }, nowMs);
  return decision.refusal ? { refused: decision.refusal.code } : { limit: decision.window.limit, remaining: decision.window.remaining };
}

const authorizerLimits = (record: ApiKeyRecord) => limitsOf(record);

it("a rotation's two secrets, alternated every 50 requests on one instance, are served exactly the customer's minute, and usage equals the answers", async () => {
  const minute = Date.parse(testInstant(0, '14:00:00'));
  const { record: old } = generateApiKey({
    plan: 'enterprise',
    owner: 'Acme',
    customLimits: { perMinute: 1_000, perDay: 20_000 },
    now: minute,
  });
  await keys.insert(old);
  const { record: successor } = generateApiKey({ ...old, now: minute });
  await keys.insertSuccessor(successor, old, new Date(minute + 30 * 60_000).toISOString());
  const secrets = [(await keys.findById(old.keyId))!, (await keys.findById(successor.keyId))!];
  expect(secrets.map(authorizerLimits)).toEqual([old.customLimits, old.customLimits]);

  const limiter = new RateLimiter(counters);
  let answered = 0;
  let refusedAt: number | undefined;
  for (let index = 0; index < 1_100; index++) {
    const secret = secrets[Math.floor(index / 50) % 2]!;
    const outcome = await request(limiter, secret, authorizerLimits(secret), minute + index * 40);
    if ('refused' in outcome) refusedAt ??= index;
    else answered++;
  }
  expect(answered).toBe(1_000);
  expect(refusedAt).toBe(1_000);
  const today = await new UsageCounters(dependencies.db, dependencies.tableNames.rateLimits).day(old, windowsAt(minute).day);
  expect(today.requests).toBe(answered);
});

it('a key moved Free → Pro → Free within a minute on one instance is served exactly its Free minute in all, each Remaining exact', async () => {
  const minute = Date.parse(testInstant(0, '15:00:00'));
  const { record } = generateApiKey({ plan: 'free', owner: 'Acme', now: minute });
  await keys.insert(record);
  const limiter = new RateLimiter(counters);
  // The authorizer's answer, cached when the minute began: Free, all minute long.
  const cached = limitsOf({ plan: 'free' });
  let served = 0;
  const sendAndCheck = async (at: number, limit: number) => {
    const outcome = await request(limiter, record, cached, at);
    if ('refused' in outcome) return String(outcome.refused);
    served++;
    expect(outcome).toEqual({ limit, remaining: limit - served });
    return 'served';
  };
  for (let i = 0; i < 30; i++) expect(await sendAndCheck(minute + i * 100, 60)).toBe('served');
  let current = await keys.changePlan(record, record, { plan: 'pro' }, new Date(minute + 3_000).toISOString());
  for (let i = 0; i < 5; i++) expect(await sendAndCheck(minute + 3_100 + i * 100, 300)).toBe('served');
  current = await keys.changePlan(current, current, { plan: 'free' }, new Date(minute + 4_000).toISOString());
  const after: string[] = [];
  for (let i = 0; i < 40; i++) after.push(await sendAndCheck(minute + 4_100 + i * 100, 60));
  expect(served).toBe(60);
  expect(after.filter((outcome) => outcome === 'served')).toHaveLength(25);
  expect(after.slice(25).every((outcome) => outcome === 'rate_limited')).toBe(true);
});

it("after a burst over several instances, usage is the answers plus at most the spare they hold (a tenth of the minute's limit)", async () => {
  const minute = Date.parse(testInstant(0, '16:00:00'));
  const limits = { perMinute: 1_000, perDay: 20_000 };
  const { record } = generateApiKey({ plan: 'enterprise', owner: 'Acme', customLimits: limits, now: minute });
  await keys.insert(record);
  const instances = Array.from({ length: 5 }, () => new RateLimiter(counters));
  let answered = 0;
  // 600 requests, 20 at a time, spread over 5 instances within 6 seconds: busy enough for each to hold spare.
  for (let batch = 0; batch < 30; batch++) {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) => request(instances[(batch * 20 + index) % 5]!, record, limits, minute + batch * 200)),
    );
    answered += outcomes.filter((outcome) => !('refused' in outcome)).length;
  }
  expect(answered).toBe(600);
  const usage = (await new UsageCounters(dependencies.db, dependencies.tableNames.rateLimits).day(record, windowsAt(minute).day)).requests;
  expect(usage).toBeGreaterThanOrEqual(answered);
  expect(usage - answered).toBeLessThanOrEqual(spareCap(limits));
  // What the instances hold is real: the bound is reached in part, not trivially 0.
  expect(usage - answered).toBeGreaterThan(0);
});
