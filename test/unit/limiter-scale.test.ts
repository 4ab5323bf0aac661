import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import type { TableName } from '../../definitions/tables';
import { CounterTable, RateLimiter, type Verdict } from '../../functions/rate-limit';
import { limiterMeasured } from '../../scripts/capacity-model';
import { seededRandom } from '../support/customer-simulation';
import { ExplicitPool, lambdaLifecycle, SampledPool, scaleOutSeconds, warmPoolSize } from '../support/limiter-scale/lambda-pool';
import { MeteredTable, partitionLimitsPerSecond, plainItemSize } from '../support/limiter-scale/metered-table';
import { ScaleAudit } from '../support/limiter-scale/scale-audit';
import { runScale } from '../support/limiter-scale/scale-run';
import { isHot, scaleCustomers } from '../support/limiter-scale/workload';
import { itemSize } from '../support/partition-limit-proxy';
import { SimulatedDynamoDB } from '../support/simulated-dynamodb';

/**
 * The scale mode's parts (test/support/limiter-scale/, `npm run scale:limiter`):
 * the metered store charges what DynamoDB (Local) charges and throttles a
 * partition where DynamoDB would, the pool keeps environments as Lambda does,
 * the customers are SCALING.md's. What the whole run finds is held to the
 * cost model in test/unit/cost-model.test.ts.
 */
const tableNames: Record<TableName, string> = { pets: 'pets', apiKeys: 'keys', rateLimits: 'counters', idempotency: 'idempotency' };

function meteredStore(clock = { nowMs: Date.parse('2099-06-15T10:00:00Z') }) {
  const store = new SimulatedDynamoDB(tableNames);
  return { clock, metered: new MeteredTable(store, tableNames.rateLimits, 'pk', () => clock.nowMs) };
}

it('sizes an item as partition-limit-proxy.ts does from its marshalled form (names, strings, numbers, maps)', () => {
  const item = {
    pk: 'cus_1#2099-06-15',
    dayGranted: 1234,
    minuteStart: 4_085_000_000,
    spare: 0.5,
    leases: { a1b2c3d4e5f6: 17, zz: 100 },
    flag: true,
  };
  expect(plainItemSize(item)).toBe(itemSize(marshall(item) as never));
});

// DynamoDB Local's ConsumedCapacity, as test/integration/limiter-write-units.test.ts measured it (limiterMeasured): the same
// minutes through the metered simulated store cost the same units.
it("charges a Business key's full minute over 20 instances, first and steady, what DynamoDB Local charged", async () => {
  const { clock, metered } = meteredStore();
  const business: PlanLimits = { perMinute: 1_000, perDay: 100_000 };
  const instances = Array.from({ length: 20 }, () => new RateLimiter(new CounterTable(metered.client(), tableNames.rateLimits)));
  const key = { keyId: 'key_minute', customerId: 'key_minute' };
  const minute = async (startMs: number) => {
    const before = { ...metered.consumed };
    for (let index = 0; index < business.perMinute; index++) {
      clock.nowMs = startMs + Math.floor((index * 59_000) / business.perMinute);
      expect((await instances[index % 20]!.admit({ ...key, limits: business }, clock.nowMs)).refusal).toBeUndefined();
    }
    return { writeUnits: metered.consumed.writeUnits - before.writeUnits, readUnits: metered.consumed.readUnits - before.readUnits };
  };
  expect(await minute(Date.parse('2099-06-15T14:00:00Z'))).toEqual(limiterMeasured.businessMinuteOver20Instances);
  expect(await minute(Date.parse('2099-06-15T14:01:00Z'))).toEqual(limiterMeasured.businessSteadyMinuteOver20Instances);
});

it('refuses a call that takes its partition past 1,000 write units in a second, applies nothing of it, and admits it the next second', async () => {
  const { clock, metered } = meteredStore();
  const client = metered.client();
  const add = () =>
    client.send(
      new UpdateCommand({
        TableName: tableNames.rateLimits,
        Key: { pk: 'hot' },
        UpdateExpression: 'SET n = if_not_exists(n, :zero) + :one',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
      }),
    );
  for (let call = 0; call < partitionLimitsPerSecond.writeUnits; call++) await add();
  await expect(add()).rejects.toBeInstanceOf(ProvisionedThroughputExceededException);
  expect(metered.consumed).toMatchObject({ writeUnits: 1_000, throttledCalls: 1 });
  // Another key is another partition: not refused.
  await client.send(new GetCommand({ TableName: tableNames.rateLimits, Key: { pk: 'cold' }, ConsistentRead: true }));
  clock.nowMs += 1_000;
  await add();
  const item = await client.send(new GetCommand({ TableName: tableNames.rateLimits, Key: { pk: 'hot' }, ConsistentRead: true }));
  expect(item.Item?.n).toBe(1_001);
  expect(metered.consumed).toMatchObject({ writeUnits: 1_001, readUnits: 2, throttledCalls: 1 });
});

it('charges a write by the larger of the item before and after it, one unit per started KB (or as if under 1 KB, for the model change)', async () => {
  const big = 'x'.repeat(1_500);
  const growAndShrink = async (metered: MeteredTable) => {
    const client = metered.client();
    const grow = {
      TableName: tableNames.rateLimits,
      Key: { pk: 'k' },
      UpdateExpression: 'SET b = :b',
      ExpressionAttributeValues: { ':b': big },
    };
    await client.send(new UpdateCommand(grow));
    await client.send(new UpdateCommand({ TableName: tableNames.rateLimits, Key: { pk: 'k' }, UpdateExpression: 'REMOVE b' }));
    return metered.consumed;
  };
  const { metered } = meteredStore();
  expect(await growAndShrink(metered)).toMatchObject({
    writeUnits: 4,
    writeCalls: 2,
    largestItemBytes: plainItemSize({ pk: 'k', b: big }),
  });
  const capped = new MeteredTable(new SimulatedDynamoDB(tableNames), tableNames.rateLimits, 'pk', () => 0, 1_000);
  expect(await growAndShrink(capped)).toMatchObject({ writeUnits: 2, writeCalls: 2, largestItemBytes: plainItemSize({ pk: 'k', b: big }) });
});

describe('function environments as Lambda keeps them', () => {
  const pool = (routing: 'random' | 'mostRecentlyUsed') =>
    new ExplicitPool({
      routing,
      random: seededRandom(7),
      newLimiter: () => new RateLimiter(new CounterTable(meteredStore().metered.client(), tableNames.rateLimits)),
    });

  it('starts at most 1,000 environments every 10 seconds ("Lambda scaling behavior"): the next concurrent request is refused', () => {
    const functionPool = pool('random');
    for (let request = 0; request < lambdaLifecycle.scaleOut.environments; request++) expect(functionPool.route(0, 5_000)).toBeDefined();
    expect(functionPool.route(1, 5_000)).toBeUndefined();
    expect(functionPool.throttled).toBe(1);
    expect(functionPool.route(lambdaLifecycle.scaleOut.everyMs, 5_000)).toBeDefined();
    expect(scaleOutSeconds(24_001)).toBe(250);
  });

  it('most-recently-used routing reuses the environment freed last; idle ones are reaped, old ones recycled', () => {
    const functionPool = pool('mostRecentlyUsed');
    const first = functionPool.route(0, 100)!;
    const second = functionPool.route(50, 100)!;
    expect(second).not.toBe(first);
    expect(functionPool.route(200, 10)).toBe(second);
    expect(functionPool.route(200 + lambdaLifecycle.idleReapMs - 1, 10)).toBe(second);
    expect(functionPool.instances).toHaveLength(1);
    const recycled = functionPool.route(lambdaLifecycle.lifetimeMs + 1, 10);
    expect(recycled).not.toBe(second);
  });

  it('a sampled pool spreads requests over every warm environment and recycles each once a lifetime', () => {
    const sampled = new SampledPool(50, { routing: 'random', random: seededRandom(3), newLimiter: () => ({}) as never }, 0);
    const reached = new Set(Array.from({ length: 2_000 }, () => sampled.route(1)));
    expect(reached.size).toBe(50);
    for (let request = 0; request < 2_000; request++) sampled.route(lambdaLifecycle.lifetimeMs);
    expect(sampled.recycled).toBe(50);
  });

  it('keeps warm a little more than the concurrency, more under random routing (nothing idles) than most-recently-used', () => {
    const concurrency = 24_000;
    expect(warmPoolSize(concurrency, 40, 'mostRecentlyUsed')).toBeGreaterThan(concurrency);
    expect(warmPoolSize(concurrency, 40, 'random')).toBeGreaterThan(warmPoolSize(concurrency, 40, 'mostRecentlyUsed'));
    expect(warmPoolSize(concurrency, 40, 'random')).toBeLessThan(concurrency * 1.05);
  });
});

it("SCALING.md's customers: production's plan mix and 5 Enterprise, 1,000 requests a second, a few hot and most cold (under a quarter of their limit)", () => {
  const customers = scaleCustomers(seededRandom(49));
  expect(customers).toHaveLength(500 + 100 + 60 + 5);
  expect(customers.reduce((sum, customer) => sum + customer.perSecond, 0)).toBeCloseTo(1_000, 6);
  const hot = customers.filter(isHot).length;
  expect(hot).toBeGreaterThan(0);
  expect(hot).toBeLessThan(customers.length / 5);
  const cold = customers.filter((customer) => customer.perSecond * 60 < customer.limits.perMinute / 4).length;
  expect(cold).toBeGreaterThan(customers.length / 2);
});

// The m× runs simulate a sample of the customers over a pool the rest of the load keeps cycling (SampledPool); at 1× every
// request can be simulated, environments started, reused and reaped one by one (ExplicitPool): the two must agree.
it('at 1×, the sampled pool of the m× runs finds the units per request that simulating every request finds, within 5 %', async () => {
  const run = (sampledPool: boolean) =>
    runScale({ factor: 1, routing: 'mostRecentlyUsed', seed: 49, warmupSeconds: 20, measuredSeconds: 30, sampledPool });
  const every = await run(false);
  const sampled = await run(true);
  expect(Math.abs(sampled.writeUnitsPerRequest / every.writeUnitsPerRequest - 1)).toBeLessThan(0.05);
  expect(Math.abs(sampled.readUnitsPerRequest / every.readUnitsPerRequest - 1)).toBeLessThan(0.05);
  expect(sampled.servedPastLimit + every.servedPastLimit + sampled.refusalsBeyondBound + every.refusalsBeyondBound).toBe(0);
});

describe('the scale mode\'s audit judges what clients saw by docs/clients.md\'s "How exact"', () => {
  const customer = { customerId: 'c', keyId: 'k', plan: 'pro' as const, limits: { perMinute: 300, perDay: 10_000 }, perSecond: 5 };
  const nowMs = Date.parse('2099-06-15T10:00:00Z');
  const served = (remaining: number): Verdict => ({
    window: { limit: 300, remaining, resetSeconds: 0 },
    headers: { 'X-RateLimit-Limit': '300', 'X-RateLimit-Remaining': String(remaining), 'X-RateLimit-Reset': '0' },
    refund: async () => false,
  });
  const refused = (code: 'rate_limited' | 'quota_exceeded') => ({ ...served(0), refusal: { code } as never });

  it('counts a 429 while more than a tenth of the minute was left as beyond the bound, and one within it as under the limit only', () => {
    const audit = new ScaleAudit();
    for (let request = 0; request < 250; request++) audit.answer(customer, nowMs, served(300 - request - 1), true);
    audit.answer(customer, nowMs, refused('rate_limited'), true);
    for (let request = 250; request < 280; request++) audit.answer(customer, nowMs, served(300 - request - 1), true);
    audit.answer(customer, nowMs, refused('rate_limited'), true);
    expect(audit.result()).toMatchObject({ refusalsUnderLimit: 2, refusalsBeyondBound: 1, servedPastLimit: 0 });
  });

  it('counts a request served past the minute, stranded spare from Remaining below the truth, and 5xx by plan', () => {
    const audit = new ScaleAudit();
    for (let request = 0; request < 301; request++) audit.answer(customer, nowMs, served(Math.max(0, 300 - request - 31)), true);
    audit.answer(customer, nowMs, 'error', true);
    const result = audit.result();
    expect(result.servedPastLimit).toBe(1);
    expect(result.strandedShare.max).toBeCloseTo(30 / 300);
    expect(result.serverErrorsByPlan).toEqual({ pro: 1 });
    // The warm-up keeps the truth but not the figures.
    const warm = new ScaleAudit();
    warm.answer(customer, nowMs, 'error', false);
    expect(warm.result().requests).toBe(0);
  });
});
