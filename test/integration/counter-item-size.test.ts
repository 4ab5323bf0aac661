import { randomBytes } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import { RateLimitRepository } from '../../functions/data/rate-limit-repository';
import { RateLimiter } from '../../functions/domain/rate-limiter';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { counterItemMeasured, counterMinuteWriteUnits, counterUnitsPerCount } from '../../scripts/capacity-model';
import { createTestTables, testDependencies } from '../support/dynamo';
import { itemSize } from '../support/partition-limit-proxy';

/**
 * What one key's counter item (rateLimits) weighs, measured with the real
 * limiter on DynamoDB Local, so that the capacity model (scripts/capacity-model.ts,
 * counterItemMeasured) charges what the code writes. Each count adds its
 * request's id to the item's set of the minute's ids, so the item, and the
 * write units of each count, grow with the counts of the minute.
 *
 * Write units by AWS's rules ("DynamoDB read and write operations",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption):
 * an UpdateItem costs one unit per started KB of the larger of the item before
 * and after it, and a write whose condition fails still costs the units of the
 * item as it is. Item sizes by "DynamoDB item sizes and formats"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html),
 * as the partition-limit simulator counts them. DynamoDB Local reports its own
 * ConsumedCapacity for each successful write: the test checks the two agree.
 */

interface Write {
  /** Units by AWS's rules, from the item's size before and after. */
  units: number;
  /** DynamoDB Local's ConsumedCapacity (successful writes only). */
  reported?: number;
  succeeded: boolean;
  sizeAfter: number;
}

/** An item as DynamoDB's JSON carries it (attribute-value form). */
type Item = Parameters<typeof itemSize>[0];

let dependencies: Dependencies;
/** The item as the last write left it, in DynamoDB's attribute-value form. */
let lastItem: Item | undefined;
const writes: Write[] = [];

const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
  // On every UpdateItem: asks DynamoDB for its ConsumedCapacity and sees the item
  // DynamoDB returns (the repository asks for ALL_NEW, which reaches here as the
  // document client's plain values, and for ALL_OLD when a condition fails,
  // which the error carries in DynamoDB's attribute-value form).
  dependencies.db.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'UpdateItemCommand') return next(args);
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity = 'TOTAL';
      const before = lastItem ? itemSize(lastItem) : 0;
      try {
        const result = await next(args);
        const output = result.output as { Attributes?: Record<string, unknown>; ConsumedCapacity?: { CapacityUnits?: number } };
        lastItem = marshall(output.Attributes ?? {}) as unknown as Item;
        const after = itemSize(lastItem);
        writes.push({
          units: units(Math.max(before, after)),
          reported: output.ConsumedCapacity?.CapacityUnits,
          succeeded: true,
          sizeAfter: after,
        });
        return result;
      } catch (error) {
        const old = (error as { Item?: Item }).Item;
        if (old) lastItem = old;
        const size = old ? itemSize(old) : before;
        writes.push({ units: units(size), succeeded: false, sizeAfter: size });
        throw error;
      }
    },
    { step: 'serialize', priority: 'high', name: 'measureCounterWrites' },
  );
});
afterAll(() => dependencies.db.destroy());

const business: PlanLimits = { perMinute: 1_000, perDay: 100_000 };
/** A request id as the API handler makes one (functions/http/api-handler.ts). */
const requestId = () => randomBytes(8).toString('base64url');

it('a Business key counted 1,000 times in a minute, then once in the next: the sizes and write units the model charges', async () => {
  const limiter = new RateLimiter(new RateLimitRepository(dependencies.db, dependencies.tableNames.rateLimits));
  // A key id as the key tool makes one (functions/domain/api-keys.ts).
  const keyId = `key_${randomBytes(8).toString('hex')}`;
  const key = { keyId, countersId: keyId };
  // A fixed instant: the sizes of numbers (epoch seconds lose their trailing zeros) are the same on every run.
  const minute = Date.parse('2099-06-15T10:00:00Z');
  const measured: { counts: number; bytes: number; writeUnits: number }[] = [];
  for (let count = 1; count <= business.perMinute; count++) {
    // Spread over the minute, as a key at its full rate sends them.
    const decision = await limiter.enforce(key, business, minute + Math.floor((count * 59_000) / business.perMinute), requestId());
    expect(decision.refusal).toBeUndefined();
    const write = writes.at(-1) as Write;
    if (counterItemMeasured.afterCounts.some((point) => point.counts === count))
      measured.push({ counts: count, bytes: write.sizeAfter, writeUnits: write.units });
  }
  // One conditional UpdateItem per count (the first count of the day tries the item's minute first, which
  // fails on no item, then starts it), each succeeding but that one; DynamoDB Local charges what AWS's rules say.
  expect(writes.map((write) => write.succeeded)).toEqual([false, ...Array(business.perMinute).fill(true)]);
  expect(writes.filter((write) => write.succeeded).every((write) => write.reported === write.units)).toBe(true);
  const fullMinute = writes.filter((write) => write.succeeded).reduce((sum, write) => sum + write.units, 0);

  writes.length = 0;
  await limiter.enforce(key, business, minute + 60_000, requestId());
  // The same-minute attempt fails on the full item (charged by its size), then the new minute replaces the set.
  expect(writes.map((write) => write.succeeded)).toEqual([false, true]);
  const nextMinuteFirstCount = writes.reduce((sum, write) => sum + write.units, 0);

  const found = { afterCounts: measured, fullMinuteWriteUnits: fullMinute, nextMinuteFirstCountWriteUnits: nextMinuteFirstCount };
  expect(found).toEqual(counterItemMeasured);
  // The model's straight line (a base plus one id's bytes a count; numbers vary by a byte or two) gives the
  // same minute within 0.5 %, and so the same units per count minute after minute.
  const within = (model: number, found: number) => expect(Math.abs(model - found) / found).toBeLessThan(0.005);
  within(counterMinuteWriteUnits(business.perMinute), fullMinute);
  const firstCount = measured[0]?.writeUnits ?? 0;
  within(counterUnitsPerCount(business.perMinute) * business.perMinute, fullMinute - firstCount + nextMinuteFirstCount);
});
