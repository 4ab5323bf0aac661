import { randomBytes } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import { CounterTable, RateLimiter } from '../../functions/rate-limit';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { limiterMeasured } from '../../scripts/capacity-model';
import { createTestTables, testDependencies } from '../support/dynamo';
import { itemSize } from '../support/partition-limit-proxy';

/**
 * What the lease limiter costs DynamoDB per request (issue 29, acceptance 1),
 * measured on DynamoDB Local with the real limiter and repository: every
 * UpdateItem and GetItem of the rateLimits table asks for ReturnConsumedCapacity,
 * and the capacity model (scripts/capacity-model.ts, limiterMeasured) and
 * `npm run cost` charge what this finds.
 *
 * Units by AWS's rules ("DynamoDB read and write operations",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption):
 * an UpdateItem costs one write unit per started KB of the larger of the item
 * before and after it, and a write whose condition fails still costs the units
 * of the item as it is (DynamoDB Local reports ConsumedCapacity for successful
 * writes only: a failed one is charged here by the size of the item it
 * returns); a strongly consistent GetItem one read unit per started 4 KB.
 */
type Item = Parameters<typeof itemSize>[0];

interface Tally {
  writeUnits: number;
  readUnits: number;
  largestItemBytes: number;
}

let dependencies: Dependencies;
const tally: Tally = { writeUnits: 0, readUnits: 0, largestItemBytes: 0 };
const reset = () => Object.assign(tally, { writeUnits: 0, readUnits: 0, largestItemBytes: 0 });

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
  dependencies.db.middlewareStack.add(
    (next, context) => async (args) => {
      const measured = context.commandName === 'UpdateItemCommand' || context.commandName === 'GetItemCommand';
      if (!measured) return next(args);
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      try {
        const result = await next(args);
        const output = result.output as {
          Attributes?: Record<string, unknown>;
          Item?: Record<string, unknown>;
          ConsumedCapacity?: { CapacityUnits?: number };
        };
        const units = output.ConsumedCapacity?.CapacityUnits ?? 0;
        if (context.commandName === 'GetItemCommand') tally.readUnits += units;
        else tally.writeUnits += units;
        const item = output.Attributes ?? output.Item;
        if (item) tally.largestItemBytes = Math.max(tally.largestItemBytes, itemSize(marshall(item) as unknown as Item));
        return result;
      } catch (error) {
        const old = (error as { Item?: Item }).Item;
        if (context.commandName === 'UpdateItemCommand') tally.writeUnits += Math.max(1, Math.ceil((old ? itemSize(old) : 0) / 1024));
        throw error;
      }
    },
    { step: 'serialize', priority: 'high', name: 'measureLimiterUnits' },
  );
});
afterAll(() => dependencies.db.destroy());

const business: PlanLimits = { perMinute: 1_000, perDay: 100_000 };
const newKey = () => {
  const keyId = `key_${randomBytes(8).toString('hex')}`;
  return { keyId, customerId: keyId };
};
const limiters = (count: number) =>
  Array.from({ length: count }, () => new RateLimiter(new CounterTable(dependencies.db, dependencies.tableNames.rateLimits)));

/** A Business key's whole minute, spread evenly over it and over the instances in turn (as a load balancer would). */
async function fullMinute(instances: RateLimiter[], minute: number, key = newKey()): Promise<Tally & { served: number }> {
  reset();
  let served = 0;
  for (let index = 0; index < business.perMinute; index++) {
    const nowMs = minute + Math.floor((index * 59_000) / business.perMinute);
    const decision = await (instances[index % instances.length] as RateLimiter).admit({ ...key, limits: business }, nowMs);
    if (!decision.refusal) served++;
  }
  return { ...tally, served };
}

it('a full Business minute over 20 instances: at most 0.3 write units per request, every request served, the item under 1 KB', async () => {
  const found = await fullMinute(limiters(20), Date.parse('2099-06-15T10:00:00Z'));
  expect(found.served).toBe(business.perMinute);
  expect(found.writeUnits / business.perMinute).toBeLessThanOrEqual(0.3);
  expect(found.largestItemBytes).toBeLessThan(1024);
  expect({ writeUnits: found.writeUnits, readUnits: found.readUnits }).toEqual(limiterMeasured.businessMinuteOver20Instances);
});

it('a Business key at its full minute, minute after minute, over 20 instances: the steady minute costs less than the first (no instance counts its first requests one by one again)', async () => {
  const instances = limiters(20);
  const key = newKey();
  const first = await fullMinute(instances, Date.parse('2099-06-15T14:00:00Z'), key);
  const steady = await fullMinute(instances, Date.parse('2099-06-15T14:01:00Z'), key);
  expect(steady.served).toBe(business.perMinute);
  expect(steady.writeUnits).toBeLessThan(first.writeUnits);
  expect({ writeUnits: steady.writeUnits, readUnits: steady.readUnits }).toEqual(limiterMeasured.businessSteadyMinuteOver20Instances);
});

it('a full Business minute over one instance: at most 0.3 write units per request', async () => {
  const found = await fullMinute(limiters(1), Date.parse('2099-06-15T11:00:00Z'));
  expect(found.served).toBe(business.perMinute);
  expect(found.writeUnits / business.perMinute).toBeLessThanOrEqual(0.3);
  expect({ writeUnits: found.writeUnits, readUnits: found.readUnits }).toEqual(limiterMeasured.businessMinuteOverOneInstance);
});

it('a key sending one request a minute: at most 1 write unit per request', async () => {
  const [limiter] = limiters(1) as [RateLimiter];
  const key = newKey();
  const first = Date.parse('2099-06-15T12:00:30Z');
  // Its first request of the day in this instance, then one a minute.
  await limiter.admit({ ...key, limits: business }, first);
  reset();
  for (let minute = 1; minute <= 10; minute++)
    expect((await limiter.admit({ ...key, limits: business }, first + minute * 60_000)).refusal).toBeUndefined();
  expect(tally.writeUnits / 10).toBeLessThanOrEqual(1);
  expect({ writeUnits: tally.writeUnits, readUnits: tally.readUnits }).toEqual(limiterMeasured.oneRequestAMinute);
});

it('a refused request costs no write once its instance knows the window is used up (one read of the key state)', async () => {
  const [limiter] = limiters(1) as [RateLimiter];
  const key = newKey();
  const small = { perMinute: 50, perDay: 10_000 };
  const now = Date.parse('2099-06-15T13:00:05Z');
  for (let index = 0; index <= small.perMinute; index++) await limiter.admit({ ...key, limits: small }, now);
  reset();
  // Fewer than a batch of refusals for the ban rule (a tenth of the threshold): nothing is recorded yet.
  for (let index = 0; index < 3; index++)
    expect((await limiter.admit({ ...key, limits: small }, now + 1_000)).refusal?.code).toBe('rate_limited');
  expect(tally.writeUnits).toBe(0);
  expect(tally.readUnits).toBe(3);
});
