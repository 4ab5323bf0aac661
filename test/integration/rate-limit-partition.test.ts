import { tables } from '../../definitions/tables';
import { DependencyUnavailableError } from '../../functions/domain/errors';
import { CounterTable, RateLimiter } from '../../functions/rate-limit';
import { type Caller, counterKey, windowsAt } from '../../functions/rate-limit/testing';
import { createDocumentClient } from '../../functions/runtime/dependencies';
import { localCredentials } from '../../local/local-api';
import { createTestTables, relaxedCallBudget, testEndpoint } from '../support/dynamo';
import { keySchemasOf, PartitionLimitProxy } from '../support/partition-limit-proxy';

/**
 * A Business key's whole minute (1,000 requests) within one second, from 20
 * instances, through the partition-limit simulator at AWS's own limits (factor
 * 1) with no burst: its clock stands still, so each partition-key value has
 * exactly one second of capacity (1,000 write and 3,000 read units) for the
 * whole test, and a request the SDK cannot get through answers 503. What the
 * contract and the usage plan's burst allow must be served (issue 29,
 * acceptance 2): none throttled, none answered 503, the item within one
 * partition's second, the 1,001st refused with 429.
 */
let proxy: PartitionLimitProxy;
let rateLimits: string;

beforeAll(async () => {
  const names = await createTestTables();
  rateLimits = names.rateLimits;
  const frozen = Date.now();
  proxy = await PartitionLimitProxy.start(testEndpoint(), keySchemasOf(tables, names), { factor: 1, burstSeconds: 1, now: () => frozen });
});
afterAll(() => proxy.close());

const business = { perMinute: 1_000, perDay: 100_000 };
const second = Date.parse('2099-06-15T10:00:05Z');

/** 20 instances on the simulator, two attempts a call as deployed (a write throttled twice is a 503), with the longer timeouts tests use on this shared machine. */
function instancesOnTheSimulator() {
  const db = createDocumentClient({ endpoint: proxy.endpoint, region: 'local', ...localCredentials(), budget: relaxedCallBudget });
  const instances = Array.from({ length: 20 }, () => new RateLimiter(new CounterTable(db, rateLimits)));
  return { db, instances };
}

type Outcomes = { served: number; unavailable: number; refused: number };

async function send(instance: RateLimiter, key: Caller, nowMs: number, outcomes: Outcomes): Promise<void> {
  try {
    const decision = await instance.admit({ ...key, limits: business }, nowMs);
    outcomes[decision.refusal ? 'refused' : 'served']++;
  } catch (error) {
    if (!(error instanceof DependencyUnavailableError)) throw error;
    outcomes.unavailable++;
  }
}

/** The item's units on the simulator (one second of one partition's capacity for the whole test) and no throttle. */
function expectWithinOnePartitionSecond(key: Caller): void {
  const item = proxy.usage.get(`${rateLimits}\u0000${counterKey(key.customerId, windowsAt(second).day)}`);
  expect(item?.writeUnits).toBeLessThanOrEqual(1_000);
  expect(item?.readUnits).toBeLessThanOrEqual(3_000);
  expect(proxy.throttles).toEqual([]);
}

/**
 * A client with 20 connections sends its 1,000 requests within one second, 20
 * at a time. Lambda gives each request an instance that is free and never two
 * requests to one instance at once (an instance serves one request at a time:
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html), so
 * each 20 at a time reach the 20 warm instances, one each.
 */
it("serves a Business key's 1,000 requests sent within one second, 20 at a time, by 20 instances: 1,000 answered 200, 0 answered 503, the 1,001st 429", async () => {
  const { db, instances } = instancesOnTheSimulator();
  const key = { keyId: 'key_burst', customerId: 'key_burst' };
  const outcomes: Outcomes = { served: 0, unavailable: 0, refused: 0 };
  for (let wave = 0; wave < 50; wave++)
    await Promise.all(instances.map((instance, index) => send(instance, key, second + Math.floor((wave * 20 + index) * 0.999), outcomes)));
  expect(outcomes).toEqual({ served: 1_000, unavailable: 0, refused: 0 });
  // The 1,001st, whichever instance takes it: refused.
  for (const instance of instances)
    expect((await instance.admit({ ...key, limits: business }, second + 999)).refusal?.code).toBe('rate_limited');
  expectWithinOnePartitionSecond(key);
  db.destroy();
});

/**
 * The same burst taken by the 20 instances as each frees up, whatever its
 * pace: an instance that falls behind (here, on one machine, whenever its
 * answers come late) may take its last request before the window's end while
 * it still holds allowance. What it holds then is a request or two (leases
 * shrink as the window runs out), and it is not lost to the limit: the client
 * going on at that instance is served it.
 */
it('taken by 20 instances as each frees up: none answered 503, at least 99 % served in the burst, exactly 1,000 in all', async () => {
  const { db, instances } = instancesOnTheSimulator();
  const key = { keyId: 'key_burst_queue', customerId: 'key_burst_queue' };
  const outcomes: Outcomes = { served: 0, unavailable: 0, refused: 0 };
  let sent = 0;
  await Promise.all(
    instances.map(async (instance) => {
      for (let request = sent++; request < 1_000; request = sent++)
        await send(instance, key, second + Math.floor(request * 0.999), outcomes);
    }),
  );
  expect(outcomes.unavailable).toBe(0);
  expect(outcomes.served + outcomes.refused).toBe(1_000);
  expect(outcomes.served).toBeGreaterThanOrEqual(990);
  let more = 0;
  for (const instance of instances) {
    while (!(await instance.admit({ ...key, limits: business }, second + 999)).refusal) more++;
    expect((await instance.admit({ ...key, limits: business }, second + 999)).refusal?.code).toBe('rate_limited');
  }
  expect(outcomes.served + more).toBe(1_000);
  expectWithinOnePartitionSecond(key);
  db.destroy();
});
