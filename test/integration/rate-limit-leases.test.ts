import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import { CustomerTable, generateApiKey } from '../../functions/customers';
import { ApiError } from '../../functions/domain/errors';
import { type CounterStore, CounterTable, RateLimiter } from '../../functions/rate-limit';
import { type Caller, counterKey, windowsAt } from '../../functions/rate-limit/testing';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { createTestTables, testDependencies, testInstant } from '../support/dynamo';

/**
 * The lease limiter on DynamoDB Local, for any limit on one counter item:
 * instances (independent RateLimiters, as separate Lambda environments have)
 * lease allowance and together serve exactly the key's limit to a client that
 * keeps sending to all of them; they remember the windows they saw used up and
 * refuse there without writing, and the ban rule still suspends a key that keeps calling.
 */
let dependencies: Dependencies;
let counters: CounterTable;

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
  counters = new CounterTable(dependencies.db, dependencies.tableNames.rateLimits);
});
afterAll(() => dependencies.db.destroy());

/** A key counted on counters of its own, as every key not made by a rotation. */
const own = (keyId: string): Caller => ({ keyId, customerId: keyId });

/** What a request got: `counted`, or the code of its 429. */
async function outcomeOf(limiter: RateLimiter, key: Caller, limits: PlanLimits, nowMs: number): Promise<string> {
  try {
    const decision = await limiter.admit({ ...key, limits: limits }, nowMs);
    return decision.refusal ? decision.refusal.code : 'counted';
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
}

/** Sends `total` requests through `instances` limiters in turn, with `keys` in turn, `parallel` at a time. */
async function sendMany(instances: RateLimiter[], keys: Caller[], limits: PlanLimits, nowMs: number, total: number, parallel = 20) {
  const outcomes: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < total) {
        const index = next++;
        const instance = instances[index % instances.length] as RateLimiter;
        outcomes.push(await outcomeOf(instance, keys[index % keys.length] as Caller, limits, nowMs));
      }
    }),
  );
  const tally: Record<string, number> = {};
  for (const outcome of outcomes) tally[outcome] = (tally[outcome] ?? 0) + 1;
  return tally;
}

async function itemCounts(keyId: string, day: string) {
  const { Item } = await dependencies.db.send(
    new GetCommand({ TableName: dependencies.tableNames.rateLimits, Key: { pk: counterKey(keyId, day) }, ConsistentRead: true }),
  );
  return { minuteGranted: Item?.minuteGranted, dayGranted: Item?.dayGranted };
}

it('gives a key of 1,001 a minute exactly its minute and its day on one item, from 4 instances that keep receiving its requests', async () => {
  const limits = { perMinute: 1_001, perDay: 1_101 };
  const instances = Array.from({ length: 4 }, () => new RateLimiter(counters));
  const minute1 = Date.parse(testInstant(0, '10:00:05'));
  expect(await sendMany(instances, [own('key_large')], limits, minute1, 1_101)).toEqual({ counted: 1_001, rate_limited: 100 });
  const day = windowsAt(minute1).day;
  expect(await itemCounts('key_large', day)).toEqual({ minuteGranted: 1_001, dayGranted: 1_001 });
  // The next minute: the day's last 100, then the day is used up.
  const minute2 = Date.parse(testInstant(0, '10:01:05'));
  expect(await sendMany(instances, [own('key_large')], limits, minute2, 200)).toEqual({ counted: 100, quota_exceeded: 100 });
  expect((await itemCounts('key_large', day)).dayGranted).toBe(1_101);
});

describe("at the window's end, an instance gives back what it holds", () => {
  const limits = { perMinute: 100, perDay: 10_000 };
  const minute = Date.parse(testInstant(0, '11:00:00'));

  /** A busy key on one instance (so it holds spare), then another instance alone until it is refused; what the first holds. */
  async function firstHoldsSpare(keyId: string, held: RateLimiter, other: RateLimiter) {
    for (let request = 0; request < 10; request++)
      expect(await outcomeOf(held, own(keyId), limits, minute + request * 500)).toBe('counted');
    let served = 10;
    while ((await outcomeOf(other, own(keyId), limits, minute + 9_000)) === 'counted') served++;
    return limits.perMinute - served;
  }

  it('with its next request, so the instances still serving the key use it: exactly the limit, refused only with nothing left', async () => {
    const [held, other] = [new RateLimiter(counters), new RateLimiter(counters)] as [RateLimiter, RateLimiter];
    const heldUnused = await firstHoldsSpare('key_window_end', held, other);
    expect(heldUnused).toBeGreaterThan(1);
    // The holder's next request is served from what it holds, and the rest goes back to the item.
    expect(await outcomeOf(held, own('key_window_end'), limits, minute + 10_000)).toBe('counted');
    let more = 0;
    while ((await outcomeOf(other, own('key_window_end'), limits, minute + 10_000)) === 'counted') more++;
    expect(more).toBe(heldUnused - 1);
    expect(await outcomeOf(held, own('key_window_end'), limits, minute + 10_000)).toBe('rate_limited');
    expect((await itemCounts('key_window_end', windowsAt(minute).day)).minuteGranted).toBe(limits.perMinute);
  });

  it('and when that write fails with its outcome unknown, holds none of it: never served twice, the request still served', async () => {
    const failGiveBack: CounterStore = {
      read: counters.read.bind(counters),
      write: async (write) => {
        if (write.kind === 'lease' && write.take < 0) throw new Error('connection reset after the request was sent');
        return counters.write(write);
      },
    };
    const warnings: string[] = [];
    const held = new RateLimiter(failGiveBack, (message) => warnings.push(message));
    const other = new RateLimiter(counters);
    await firstHoldsSpare('key_window_end_unknown', held, other);
    expect(await outcomeOf(held, own('key_window_end_unknown'), limits, minute + 10_000)).toBe('counted');
    expect(warnings).toEqual(['rate-limit allowance not given back']);
    // Unknown whether it went back: the holder serves none of it again, and the item never grants past the limit.
    expect(await outcomeOf(held, own('key_window_end_unknown'), limits, minute + 10_000)).toBe('rate_limited');
    expect(await outcomeOf(other, own('key_window_end_unknown'), limits, minute + 10_000)).toBe('rate_limited');
    expect((await itemCounts('key_window_end_unknown', windowsAt(minute).day)).minuteGranted).toBe(limits.perMinute);
  });
});

it('a revoked key is refused at once, by an instance that holds a lease of it too', async () => {
  const now = Date.parse(testInstant(1, '08:00:00'));
  const limits = { perMinute: 5_000, perDay: 100_000 };
  const { record } = generateApiKey({ plan: 'enterprise', owner: 'test', customLimits: limits, now });
  const keys = new CustomerTable(dependencies.db, dependencies.tableNames);
  await keys.insert(record);
  const holder = new RateLimiter(counters);
  expect(await sendMany([holder], [own(record.keyId)], limits, now, 20, 1)).toEqual({ counted: 20 });
  await keys.revoke(record, new Date(now).toISOString());
  expect(await outcomeOf(holder, own(record.keyId), limits, now + 1_000)).toBe('unauthorized');
  expect(await outcomeOf(new RateLimiter(counters), own(record.keyId), limits, now + 1_000)).toBe('unauthorized');
});

it('counts a rotated key and its successor together on one item: exactly the limit for both; the old key’s expiry stops only the old key', async () => {
  const limits = { perMinute: 1_001, perDay: 10_000 };
  const now = Date.parse(testInstant(1, '09:00:05'));
  const keys = new CustomerTable(dependencies.db, dependencies.tableNames);
  const { record: old } = generateApiKey({ plan: 'enterprise', owner: 'test', customLimits: limits, now });
  await keys.insert(old);
  const { record: successor } = generateApiKey({ plan: 'enterprise', owner: 'test', customLimits: limits, customerId: old.keyId, now });
  const expiresAt = now + 60_000;
  await keys.insertSuccessor(successor, old, new Date(expiresAt).toISOString());
  const counted = (record: typeof old): Caller => ({ keyId: record.keyId, customerId: record.customerId });

  const instances = Array.from({ length: 4 }, () => new RateLimiter(counters));
  expect(await sendMany(instances, [counted(old), counted(successor)], limits, now, 1_101)).toEqual({ counted: 1_001, rate_limited: 100 });
  expect((await itemCounts(old.keyId, windowsAt(now).day)).minuteGranted).toBe(1_001);
  expect((await itemCounts(successor.keyId, windowsAt(now).day)).minuteGranted).toBeUndefined();

  // The grace ends: the old key is refused, its successor counted.
  for (const limiter of instances) {
    expect(await outcomeOf(limiter, counted(old), limits, expiresAt)).toBe('unauthorized');
    expect(await outcomeOf(limiter, counted(successor), limits, expiresAt)).toBe('counted');
  }
});

describe('an instance that has seen a window used up', () => {
  const limits = { perMinute: 20, perDay: 1_000 };

  it('refuses without writing, records refusals in batches, and suspends at exactly the 20th on one instance', async () => {
    const writes: string[] = [];
    // The repository, with a note of each write the limiter asks of it.
    const counting: CounterStore = {
      read: (...args) => counters.read(...args),
      write: (write) => {
        writes.push(write.kind);
        return counters.write(write);
      },
    };
    const limiter = new RateLimiter(counting);
    const now = Date.parse(testInstant(2, '09:00:01'));
    expect(await sendMany([limiter], [own('key_memory')], limits, now, 20, 1)).toEqual({ counted: 20 });
    writes.length = 0;
    const codes: string[] = [];
    for (let refused = 0; refused < 20; refused++) codes.push(await outcomeOf(limiter, own('key_memory'), limits, now + 1_000));
    expect(codes).toEqual([...Array(19).fill('rate_limited'), 'key_suspended']);
    // One lease write learns the minute is used up; then one write per 2 refusals (a tenth of the threshold), and the ban.
    expect(writes).toEqual(['lease', ...Array(10).fill('refusals'), 'ban']);
    writes.length = 0;
    expect(limiter.knowsRefusal({ keyId: 'key_memory', customerId: 'key_memory', limits: limits }, now + 2_000)).toBe(true);
    expect(await outcomeOf(limiter, own('key_memory'), limits, now + 2_000)).toBe('key_suspended');
    expect(writes).toEqual([]);
  });

  it('with two instances, suspends within one batch per instance of the threshold; the other learns it when its minute ends', async () => {
    const first = new RateLimiter(counters);
    const second = new RateLimiter(counters);
    const now = Date.parse(testInstant(2, '10:00:01'));
    expect(await sendMany([first, second], [own('key_two')], limits, now, 20, 1)).toEqual({ counted: 20 });
    const codes: string[] = [];
    for (let refused = 0; refused < 24; refused++)
      codes.push(await outcomeOf(refused % 2 ? second : first, own('key_two'), limits, now + 1_000));
    const suspendedAt = codes.indexOf('key_suspended') + 1;
    // Threshold 20; each instance holds back at most one refusal (batches of 2).
    expect(suspendedAt).toBeGreaterThanOrEqual(20);
    expect(suspendedAt).toBeLessThanOrEqual(22);
    // The minute's end: both answer key_suspended, with Retry-After to the suspension's end.
    for (const instance of [first, second]) expect(await outcomeOf(instance, own('key_two'), limits, now + 60_000)).toBe('key_suspended');
  });

  it('forgets it when the key limits change', async () => {
    const limiter = new RateLimiter(counters);
    const now = Date.parse(testInstant(2, '11:00:01'));
    const small = { perMinute: 2, perDay: 1_000 };
    expect(await sendMany([limiter], [own('key_upgraded')], small, now, 3, 1)).toEqual({ counted: 2, rate_limited: 1 });
    expect(limiter.knowsRefusal({ keyId: 'key_upgraded', customerId: 'key_upgraded', limits: small }, now)).toBe(true);
    const larger = { perMinute: 300, perDay: 10_000 };
    expect(limiter.knowsRefusal({ keyId: 'key_upgraded', customerId: 'key_upgraded', limits: larger }, now)).toBe(false);
    // The counters hold the minute's 2; the new plan allows 298 more.
    const decision = await limiter.admit({ ...own('key_upgraded'), limits: larger }, now);
    expect(decision.window).toMatchObject({ limit: 300, remaining: 297 });
  });
});

describe('what an instance holds is never lost to the day nor counted twice', () => {
  const limits = { perMinute: 100, perDay: 10_000 };

  it('when another instance’s clock starts the next minute first, the spare of the earlier minute goes back to the day', async () => {
    const keyId = 'key_clock_ahead';
    const [behind, ahead] = [new RateLimiter(counters), new RateLimiter(counters)] as [RateLimiter, RateLimiter];
    const minuteEnd = Date.parse(testInstant(3, '12:01:00'));
    // Busy on the instance whose clock is behind: it leases spare in the minute ending at minuteEnd.
    for (let request = 0; request < 10; request++) {
      expect(await outcomeOf(behind, own(keyId), limits, minuteEnd - 20_000 + request * 400)).toBe('counted');
    }
    // The other instance's clock is 50 ms ahead: it starts the next minute on the item.
    expect(await outcomeOf(ahead, own(keyId), limits, minuteEnd + 20)).toBe('counted');
    // Still in its own earlier minute, the first instance finds the item counting the next one: it leases there.
    expect(await outcomeOf(behind, own(keyId), limits, minuteEnd - 30)).toBe('counted');
    // A minute later, counted request by request (fewer than 3 in 10 s: no spare), its writes return what it never served.
    for (let request = 0; request < 2; request++) expect(await outcomeOf(behind, own(keyId), limits, minuteEnd + 61_000)).toBe('counted');
    // The day counts exactly the 14 requests served: nothing of what the first instance held is lost to it.
    expect((await itemCounts(keyId, windowsAt(minuteEnd).day)).dayGranted).toBe(14);
  });

  it('a refund whose write and read both fail is not claimed: the 503’s headers keep counting it, and it is not served again', async () => {
    const keyId = 'key_refund_unknown';
    let failing = false;
    const flaky: CounterStore = {
      read: (...args) => (failing ? Promise.reject(new Error('connection reset')) : counters.read(...args)),
      write: (write) => (failing ? Promise.reject(new Error('connection reset after the request was sent')) : counters.write(write)),
    };
    const limiter = new RateLimiter(flaky);
    const now = Date.parse(testInstant(3, '13:00:05'));
    const decision = await limiter.admit({ ...own(keyId), limits: limits }, now);
    failing = true;
    expect(await decision.refund()).toBe(false);
    failing = false;
    const day = windowsAt(now).day;
    expect((await itemCounts(keyId, day)).minuteGranted).toBe(1);
    // Counted once as granted, never served twice: the next request takes a grant of its own.
    expect(await outcomeOf(limiter, own(keyId), limits, now + 1_000)).toBe('counted');
    expect((await itemCounts(keyId, day)).minuteGranted).toBe(2);
  });
});
