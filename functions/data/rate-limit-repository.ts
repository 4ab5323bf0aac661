import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import { type ApiKeyRecord, countersIdOf } from '../domain/api-keys';
import { DependencyUnavailableError } from '../domain/errors';
import type { CountOutcome, Windows } from '../domain/rate-limit';
import type { CountedKey, KeyState, RateCounters } from '../domain/rate-limiter';
import { itemThatFailedCondition } from './conditional-check';
import { dynamoCall } from './dynamo-errors';

/** Counters are kept this long after their day, for usage reports. */
export const COUNTER_RETENTION_DAYS = 35;
const RETENTION_SECONDS = COUNTER_RETENTION_DAYS * 86_400;

/**
 * One item per set of counters, UTC day and shard holds the day's count, the
 * current minute's count, the refusals of the current minute and any
 * suspension. A set of counters is a customer's: a key's own, which its
 * rotation's successors inherit (domain/api-keys.ts, countersIdOf), so the old
 * and the new secret share one set of limits. Shards: domain/rate-limit.ts,
 * counterShards (one for every fixed plan). Every request is counted by one conditional UpdateItem on one
 * shard (two at the first request of a minute), so counting is atomic under any
 * concurrency.
 *
 * Exactly once per request id: each count adds its request's id to `countIds`,
 * the ids counted on the item in its current minute, and is conditional on the
 * id not being there yet. An attempt that lands late (after the SDK's retry and
 * other requests were counted) fails that condition; an attempt from an earlier
 * minute fails the minute's condition (a new minute starts a new set). The set
 * is bounded by the minute's limit on the item. When the SDK repeats a write
 * whose answer it lost and the first attempt had landed, the item returned on
 * the failed condition (ReturnValuesOnConditionCheckFailure) holds our id: the
 * request is counted once, with the counts that item shows. A refund keeps the
 * id (in `refundedIds` too), so a late attempt cannot count it again.
 *
 * The key tool writes the key's state here too (`keyRevoked`, `keyExpiresAt`,
 * `keyPerMinute`/`keyPerDay`; see keyStateUpdates), so the count's condition
 * refuses a revoked or expired key and applies a changed plan at once, without
 * another read: the authorizer's cached answer cannot outlive them. The keys of
 * a rotation share the item, and one of them may be revoked or expired while
 * the other works: a key's revocation and expiry are marks of its own
 * (keyStateNames). The limits are the customer's, so they are one for all. Those
 * writes are transactions: an UpdateItem on an item a TransactWriteItems holds
 * fails with TransactionConflictException ("Transaction conflict handling in
 * DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling;
 * the SDK does not retry it): every write here retries it with backoff
 * (CONFLICT_RETRY_DELAYS_MS, under 1 s in all), then answers 503.
 */
interface CounterItem {
  dayCount?: number;
  minuteStart?: number;
  minuteCount?: number;
  countIds?: Set<string>;
  refundedIds?: Set<string>;
  refusedMinute?: number;
  refusedCount?: number;
  lastRefusalId?: string;
  suspendedUntil?: number;
  // keyRevoked, keyExpiresAt and the marks of other keys counting here: under the names keyStateNames gives (markOf).
  keyPerMinute?: number;
  keyPerDay?: number;
}

/**
 * The names of a key's revocation and expiry marks on the counter items it
 * counts on. The key whose id the counters carry keeps the plain names (those
 * of every item before rotations shared counters); a key counting on another
 * key's counters (a rotation's successor) has names of its own, so that
 * revoking or expiring one key of a rotation never stops the other.
 */
export function keyStateNames(key: { keyId: string; countersId: string }): { revoked: string; expiresAt: string } {
  const own = key.keyId === key.countersId;
  return { revoked: own ? 'keyRevoked' : `keyRevoked#${key.keyId}`, expiresAt: own ? 'keyExpiresAt' : `keyExpiresAt#${key.keyId}` };
}

/**
 * Each failed attempt means the minute moved on or the plan changed (and so
 * progress was made); the bound only guards against a bug looping forever.
 */
const MAX_ATTEMPTS = 6;
/** Waits before each retry of a write refused by TransactionConflictException (full jitter up to each). */
export const CONFLICT_RETRY_DELAYS_MS = [25, 50, 100, 200, 400] as const;

const notSuspended = '(attribute_not_exists(suspendedUntil) OR suspendedUntil <= :now)';
/** With the names #keyRevoked and #keyExpiresAt of the counting key's marks (keyStateNames). */
const keyUsable = '(attribute_not_exists(#keyRevoked) AND (attribute_not_exists(#keyExpiresAt) OR #keyExpiresAt > :now))';
const samePlan = '(attribute_not_exists(keyPerMinute) OR (keyPerMinute = :keyPerMinute AND keyPerDay = :keyPerDay))';
const notCountedYet = 'NOT contains(countIds, :requestId)';

/** One request's count on one shard. */
export interface ShardCount {
  /** The key the request came with: its revocation and expiry are checked. */
  keyId: string;
  /** Whose counters it counts on (domain/api-keys.ts, countersIdOf). */
  countersId: string;
  shard: number;
  /** The key's limits, as the caller believes them (the item may know newer ones). */
  limits: PlanLimits;
  /** This shard's part of them. */
  allowance: PlanLimits;
  windows: Windows;
  nowMs: number;
  requestId: string;
}

export class RateLimitRepository implements RateCounters {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async count(request: ShardCount): Promise<CountOutcome> {
    const { keyId, countersId, shard, limits, allowance, windows, requestId } = request;
    const nowSeconds = Math.floor(request.nowMs / 1000);
    const marks = keyStateNames({ keyId, countersId });
    let minuteStart = windows.minuteStart;
    let sameMinute = true;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const result = await this.conditionalUpdate(
        counterKey(countersId, windows.day, shard),
        countUpdate({ countersId, marks, limits, allowance, windows, minuteStart, sameMinute, nowSeconds, requestId }),
      );
      if (result.updated) return counted(limits, result.item);
      const old = result.item;
      // Our own count, landed by an attempt whose answer was lost.
      if (old?.minuteStart === minuteStart && old.countIds?.has(requestId)) return counted(limits, old);
      const expiresAt = markOf(old, marks.expiresAt);
      if (markOf(old, marks.revoked) || (expiresAt !== undefined && Number(expiresAt) <= nowSeconds))
        return { kind: 'key_unusable', limits };
      if (old?.keyPerMinute !== undefined && (old.keyPerMinute !== limits.perMinute || old.keyPerDay !== limits.perDay)) {
        return { kind: 'plan_changed', limits: { perMinute: old.keyPerMinute, perDay: Number(old.keyPerDay) } };
      }
      if (old?.suspendedUntil !== undefined && old.suspendedUntil > nowSeconds)
        return { kind: 'suspended', until: old.suspendedUntil, limits };
      if ((old?.dayCount ?? 0) >= allowance.perDay) return { kind: 'day_exhausted', limits, refusals: refusalsIn(old, minuteStart) };
      if (old?.minuteStart === undefined || old.minuteStart < minuteStart) {
        sameMinute = false;
        continue;
      }
      if (old.minuteStart > minuteStart && result.attempts > 1) {
        // A request stamped a later minute started a new set of ids while an
        // attempt of ours, whose answer was lost, may have counted us in ours.
        throw new DependencyUnavailableError(new Error('Rate-limit count outcome unknown: its minute ended meanwhile'));
      }
      // A request stamped a later minute than ours (clocks of two containers
      // differ by a few ms): count ours in that minute.
      minuteStart = old.minuteStart;
      if ((old.minuteCount ?? 0) >= allowance.perMinute)
        return { kind: 'minute_exhausted', limits, refusals: refusalsIn(old, minuteStart) };
      sameMinute = true;
    }
    throw new Error('Rate-limit counter kept changing under us');
  }

  async countRefusals(countersId: string, windows: Windows, refusals: number, batchId: string): Promise<number> {
    let minute = windows.minuteStart;
    let sameMinute = true;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const values = { ':refusals': refusals, ':minute': minute, ':batchId': batchId };
      const result = await this.conditionalUpdate(counterKey(countersId, windows.day, 0), {
        UpdateExpression: sameMinute
          ? 'SET refusedCount = refusedCount + :refusals, lastRefusalId = :batchId'
          : 'SET refusedMinute = :minute, refusedCount = :refusals, lastRefusalId = :batchId',
        ConditionExpression: sameMinute
          ? 'refusedMinute = :minute AND (attribute_not_exists(lastRefusalId) OR lastRefusalId <> :batchId)'
          : 'attribute_not_exists(refusedMinute) OR refusedMinute < :minute',
        ExpressionAttributeValues: values,
      });
      if (result.updated) return Number(result.item.refusedCount);
      const old = result.item;
      if (old?.lastRefusalId === batchId) return Number(old.refusedCount);
      // Refusals stamped a later minute were written first (clocks of two
      // containers differ by a few ms): count ours in that minute.
      if (old?.refusedMinute !== undefined && old.refusedMinute > minute) minute = old.refusedMinute;
      sameMinute = old?.refusedMinute !== undefined && old.refusedMinute >= minute;
    }
    throw new Error('Refusal counter kept changing under us');
  }

  async refund(countersId: string, shard: number, windows: Windows, requestId: string): Promise<boolean> {
    // The id stays in countIds (a late attempt of the count must not count it
    // again) and joins refundedIds (so the refund itself is safe to repeat).
    // countIds holds the item's current minute only, so this is the minute it was counted in.
    const ids = new Set([requestId]);
    const result = await this.conditionalUpdate(counterKey(countersId, windows.day, shard), {
      UpdateExpression: 'SET minuteCount = minuteCount - :one, dayCount = dayCount - :one ADD refundedIds :ids',
      ConditionExpression: 'contains(countIds, :requestId) AND NOT contains(refundedIds, :requestId)',
      ExpressionAttributeValues: { ':one': 1, ':requestId': requestId, ':ids': ids },
    });
    return result.updated;
  }

  /** The key state on the counters' item of the day (shard 0: the key tool and the ban write every shard alike), read strongly consistent. */
  async keyState(key: CountedKey, windows: Windows, nowMs: number): Promise<KeyState> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({ TableName: this.tableName, Key: { pk: counterKey(key.countersId, windows.day) }, ConsistentRead: true }),
      ),
    );
    const item = Item as CounterItem | undefined;
    const marks = keyStateNames(key);
    const expiresAt = markOf(item, marks.expiresAt);
    const nowSeconds = Math.floor(nowMs / 1000);
    return {
      usable: !markOf(item, marks.revoked) && (expiresAt === undefined || Number(expiresAt) > nowSeconds),
      ...(item?.keyPerMinute !== undefined ? { limits: { perMinute: Number(item.keyPerMinute), perDay: Number(item.keyPerDay) } } : {}),
      suspendedUntil: Number(item?.suspendedUntil ?? 0),
    };
  }

  /**
   * Suspends the keys counting on these counters until `until` (Unix seconds),
   * on every shard of every day item the suspension touches: the ban is the customer's.
   */
  async suspend(countersId: string, shards: number, windows: Windows, until: number): Promise<void> {
    const days = [windows.day];
    if (until > windows.dayEnd) days.push(new Date(windows.dayEnd * 1000).toISOString().slice(0, 10));
    for (const day of days) {
      for (let shard = 0; shard < shards; shard++) {
        await this.withConflictRetries(() =>
          this.db.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: { pk: counterKey(countersId, day, shard) },
              UpdateExpression:
                'SET suspendedUntil = :until, keyId = :keyId, #day = :day, expiresAt = if_not_exists(expiresAt, :expiresAt)',
              ExpressionAttributeNames: { '#day': 'day' },
              ExpressionAttributeValues: { ':until': until, ':keyId': countersId, ':day': day, ':expiresAt': until + RETENTION_SECONDS },
            }),
          ),
        );
      }
    }
  }

  private async conditionalUpdate(
    key: string,
    update: Pick<
      UpdateCommand['input'],
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
    >,
  ): Promise<
    | { updated: true; item: CounterItem }
    | { updated: false; item: CounterItem | undefined /** The SDK's attempts of this call. */; attempts: number }
  > {
    try {
      const { Attributes } = await this.withConflictRetries(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: key },
            ...update,
            ReturnValues: 'ALL_NEW',
            // The item as it is when the condition fails: tells a repeat of our own write from another's.
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { updated: true, item: (Attributes ?? {}) as CounterItem };
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
        const attempts = (error as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1;
        return { updated: false, item: itemThatFailedCondition<CounterItem>(error), attempts };
      }
      throw error;
    }
  }

  /**
   * Runs one write, retrying it while a key-tool transaction holds the item;
   * still conflicting after the last wait, it is a dependency failure (503).
   */
  private async withConflictRetries<T>(call: () => Promise<T>): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        return await dynamoCall(call);
      } catch (error) {
        // dynamoCall has already classed the conflict a dependency failure: look at what DynamoDB said.
        const said = error instanceof DependencyUnavailableError ? error.cause : error;
        if (!(said instanceof Error) || said.name !== 'TransactionConflictException') throw error;
        const wait = CONFLICT_RETRY_DELAYS_MS[retry];
        if (wait === undefined) throw error;
        await sleep(Math.random() * wait);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A key's revocation or expiry mark on an item, by the name keyStateNames gives it. */
function markOf(item: CounterItem | undefined, name: string): unknown {
  return (item as Record<string, unknown> | undefined)?.[name];
}

function refusalsIn(item: CounterItem | undefined, minuteStart: number): number | undefined {
  return item?.refusedMinute === minuteStart ? Number(item.refusedCount) : undefined;
}

function counted(limits: PlanLimits, item: CounterItem): CountOutcome {
  return { kind: 'counted', minuteCount: Number(item.minuteCount), dayCount: Number(item.dayCount), limits };
}

/** The UpdateItem that counts one request on one shard: in the item's current minute, or starting a new one. */
function countUpdate(input: {
  countersId: string;
  /** The names of the counting key's revocation and expiry marks. */
  marks: { revoked: string; expiresAt: string };
  limits: PlanLimits;
  allowance: PlanLimits;
  windows: Windows;
  minuteStart: number;
  sameMinute: boolean;
  nowSeconds: number;
  requestId: string;
}) {
  const values = {
    ':one': 1,
    ':minute': input.minuteStart,
    ':perDay': input.allowance.perDay,
    ':keyPerMinute': input.limits.perMinute,
    ':keyPerDay': input.limits.perDay,
    ':now': input.nowSeconds,
    ':ids': new Set([input.requestId]),
  };
  const always = `${notSuspended} AND ${keyUsable} AND ${samePlan}`;
  const markNames = { '#keyRevoked': input.marks.revoked, '#keyExpiresAt': input.marks.expiresAt };
  if (input.sameMinute) {
    return {
      UpdateExpression: 'SET minuteCount = minuteCount + :one, dayCount = dayCount + :one, lastRequestAt = :now ADD countIds :ids',
      ConditionExpression: `minuteStart = :minute AND minuteCount < :perMinute AND dayCount < :perDay AND ${notCountedYet} AND ${always}`,
      ExpressionAttributeNames: markNames,
      ExpressionAttributeValues: { ...values, ':perMinute': input.allowance.perMinute, ':requestId': input.requestId },
    };
  }
  // A new minute (every shard's minute allowance is at least 1, counterShards): its set of ids starts with ours. (lastCountId: the single id items kept before the set.)
  return {
    UpdateExpression:
      'SET minuteStart = :minute, minuteCount = :one, dayCount = if_not_exists(dayCount, :zero) + :one, lastRequestAt = :now, countIds = :ids, keyId = :keyId, #day = :day, expiresAt = :expiresAt REMOVE refundedIds, lastCountId',
    ConditionExpression: `(attribute_not_exists(minuteStart) OR minuteStart < :minute) AND (attribute_not_exists(dayCount) OR dayCount < :perDay) AND ${always}`,
    ExpressionAttributeNames: { ...markNames, '#day': 'day' },
    ExpressionAttributeValues: {
      ...values,
      ':zero': 0,
      ':keyId': input.countersId,
      ':day': input.windows.day,
      ':expiresAt': input.windows.dayEnd + RETENTION_SECONDS,
    },
  };
}

/** What the key tool changed about a key, for the functions to apply at once. */
export type KeyStateChange = { revoked: true } | { expiresAtSeconds: number } | { limits: PlanLimits };

/**
 * The updates (for a TransactWriteItems beside the key's own update) that copy
 * a key's new state onto the counter items it counts on for every UTC day from
 * `fromSeconds` until `untilSeconds`: the span in which a cached authorizer
 * answer could still let the key in with its old state. Later days need
 * nothing: by then the authorizer reads the key afresh. A revocation or an
 * expiry is the key's own mark (keyStateNames); new limits hold for every key
 * counting there, as the limits are the customer's.
 */
export function keyStateUpdates(
  tableName: string,
  key: Pick<ApiKeyRecord, 'keyId' | 'countersId'>,
  change: KeyStateChange,
  fromSeconds: number,
  untilSeconds: number,
  /** The key's counter shards (for a plan change: the larger of the old and the new plan's). */
  shards = 1,
) {
  const countersId = countersIdOf(key);
  const marks = keyStateNames({ keyId: key.keyId, countersId });
  const set: { expression: string; names: Record<string, string>; values: Record<string, unknown> } =
    'revoked' in change
      ? { expression: '#mark = :true', names: { '#mark': marks.revoked }, values: { ':true': true } }
      : 'expiresAtSeconds' in change
        ? { expression: '#mark = :keyExpiresAt', names: { '#mark': marks.expiresAt }, values: { ':keyExpiresAt': change.expiresAtSeconds } }
        : {
            expression: 'keyPerMinute = :keyPerMinute, keyPerDay = :keyPerDay',
            names: {},
            values: { ':keyPerMinute': change.limits.perMinute, ':keyPerDay': change.limits.perDay },
          };
  return daysBetween(fromSeconds, untilSeconds).flatMap((day) =>
    Array.from({ length: shards }, (_, shard) => ({
      Update: {
        TableName: tableName,
        Key: { pk: counterKey(countersId, day.day, shard) },
        UpdateExpression: `SET ${set.expression}, keyId = :keyId, #day = :day, expiresAt = if_not_exists(expiresAt, :expiresAt)`,
        ExpressionAttributeNames: { ...set.names, '#day': 'day' },
        ExpressionAttributeValues: {
          ...set.values,
          ':keyId': countersId,
          ':day': day.day,
          ':expiresAt': day.endSeconds + RETENTION_SECONDS,
        },
      },
    })),
  );
}

function daysBetween(fromSeconds: number, untilSeconds: number): { day: string; endSeconds: number }[] {
  const days: { day: string; endSeconds: number }[] = [];
  for (let start = Math.floor(fromSeconds / 86_400) * 86_400; start <= untilSeconds; start += 86_400) {
    days.push({ day: new Date(start * 1000).toISOString().slice(0, 10), endSeconds: start + 86_400 });
  }
  return days;
}

/** Shard 0 keeps the key of the single item every key had before shards. */
export function counterKey(countersId: string, day: string, shard = 0): string {
  return shard === 0 ? `${countersId}#${day}` : `${countersId}#${day}#${shard}`;
}
