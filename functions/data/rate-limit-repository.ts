import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import type { CountOutcome, Windows } from '../domain/rate-limit';
import type { RateCounters } from '../domain/rate-limiter';
import { dynamoCall } from './dynamo-errors';

/** Counters are kept this long after their day, for usage reports. */
export const COUNTER_RETENTION_DAYS = 35;
const RETENTION_SECONDS = COUNTER_RETENTION_DAYS * 86_400;

/**
 * One item per key and UTC day holds the day's count, the current minute's
 * count, the refusals of the current minute and any suspension. Every request
 * is counted by one conditional UpdateItem on it (two at the first request of a
 * minute), so counting is atomic under any concurrency: a refused request
 * changes no counter.
 *
 * Each count and refusal writes the id of its request (`lastCountId`,
 * `lastRefusalId`) and is conditional on the item not carrying that id yet. When
 * the SDK repeats a write whose answer it lost (a timeout, a reset connection)
 * and the first attempt had landed, the repeat fails its condition, and the
 * item it returns (ReturnValuesOnConditionCheckFailure) shows our own id: the
 * request is counted once, with the counts the first attempt wrote.
 *
 * The key tool writes the key's state here too (`keyRevoked`, `keyExpiresAt`,
 * `keyPerMinute`/`keyPerDay`; see keyStateUpdates), so the count's condition
 * refuses a revoked or expired key and applies a changed plan at once, without
 * another read: the authorizer's cached answer cannot outlive them.
 */
interface CounterItem {
  dayCount?: number;
  minuteStart?: number;
  minuteCount?: number;
  lastCountId?: string;
  refusedMinute?: number;
  refusedCount?: number;
  lastRefusalId?: string;
  suspendedUntil?: number;
  keyRevoked?: boolean;
  keyExpiresAt?: number;
  keyPerMinute?: number;
  keyPerDay?: number;
}

/**
 * Each failed attempt means another request or a plan change changed the item
 * first (and so made progress); the bound only guards against a bug looping forever.
 */
const MAX_ATTEMPTS = 6;

const notSuspended = '(attribute_not_exists(suspendedUntil) OR suspendedUntil <= :now)';
const keyUsable = '(attribute_not_exists(keyRevoked) AND (attribute_not_exists(keyExpiresAt) OR keyExpiresAt > :now))';
const samePlan = '(attribute_not_exists(keyPerMinute) OR (keyPerMinute = :perMinute AND keyPerDay = :perDay))';
const notCountedYet = '(attribute_not_exists(lastCountId) OR lastCountId <> :requestId)';

export class RateLimitRepository implements RateCounters {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async count(keyId: string, callerLimits: PlanLimits, windows: Windows, nowMs: number, requestId: string): Promise<CountOutcome> {
    const nowSeconds = Math.floor(nowMs / 1000);
    let limits = callerLimits;
    let minuteStart = windows.minuteStart;
    let sameMinute = true;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const result = await this.conditionalUpdate(
        keyId,
        windows.day,
        countUpdate({ keyId, limits, windows, minuteStart, sameMinute, nowSeconds, requestId }),
      );
      if (result.updated) return counted(limits, result.item);
      const old = result.item;
      // Our own write, repeated by the SDK after its answer was lost.
      if (old?.lastCountId === requestId) return counted(limits, old);
      if (old?.keyRevoked || (old?.keyExpiresAt !== undefined && old.keyExpiresAt <= nowSeconds)) return { kind: 'key_unusable', limits };
      if (old?.keyPerMinute !== undefined && (old.keyPerMinute !== limits.perMinute || old.keyPerDay !== limits.perDay)) {
        limits = { perMinute: old.keyPerMinute, perDay: Number(old.keyPerDay) };
        continue;
      }
      if (old?.suspendedUntil !== undefined && old.suspendedUntil > nowSeconds)
        return { kind: 'suspended', until: old.suspendedUntil, limits };
      if ((old?.dayCount ?? 0) >= limits.perDay) return { kind: 'day_exhausted', limits };
      if (old?.minuteStart === undefined || old.minuteStart < minuteStart) {
        sameMinute = false;
        continue;
      }
      // A request stamped a later minute than ours (clocks of two containers
      // differ by a few ms): count ours in that minute.
      minuteStart = old.minuteStart;
      if ((old.minuteCount ?? 0) >= limits.perMinute) return { kind: 'minute_exhausted', limits };
      sameMinute = true;
    }
    throw new Error('Rate-limit counter kept changing under us');
  }

  async countRefusal(keyId: string, windows: Windows, requestId: string): Promise<number> {
    let minute = windows.minuteStart;
    let sameMinute = true;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const values = { ':one': 1, ':minute': minute, ':requestId': requestId };
      const result = await this.conditionalUpdate(keyId, windows.day, {
        UpdateExpression: sameMinute
          ? 'SET refusedCount = refusedCount + :one, lastRefusalId = :requestId'
          : 'SET refusedMinute = :minute, refusedCount = :one, lastRefusalId = :requestId',
        ConditionExpression: sameMinute
          ? 'refusedMinute = :minute AND (attribute_not_exists(lastRefusalId) OR lastRefusalId <> :requestId)'
          : 'attribute_not_exists(refusedMinute) OR refusedMinute < :minute',
        ExpressionAttributeValues: values,
      });
      if (result.updated) return Number(result.item.refusedCount);
      const old = result.item;
      if (old?.lastRefusalId === requestId) return Number(old.refusedCount);
      // A refusal stamped a later minute was written first (clocks of two
      // containers differ by a few ms): count ours in that minute.
      if (old?.refusedMinute !== undefined && old.refusedMinute > minute) minute = old.refusedMinute;
      sameMinute = old?.refusedMinute !== undefined && old.refusedMinute >= minute;
    }
    throw new Error('Refusal counter kept changing under us');
  }

  async refund(keyId: string, windows: Windows, requestId: string): Promise<boolean> {
    // Clearing lastCountId makes the refund itself safe to repeat.
    const result = await this.conditionalUpdate(keyId, windows.day, {
      UpdateExpression: 'SET minuteCount = minuteCount - :one, dayCount = dayCount - :one REMOVE lastCountId',
      ConditionExpression: 'lastCountId = :requestId',
      ExpressionAttributeValues: { ':one': 1, ':requestId': requestId },
    });
    return result.updated;
  }

  /** Suspends a key until `until` (Unix seconds), on every day item the suspension touches. */
  async suspend(keyId: string, windows: Windows, until: number): Promise<void> {
    const days = [windows.day];
    if (until > windows.dayEnd) days.push(new Date(windows.dayEnd * 1000).toISOString().slice(0, 10));
    for (const day of days) {
      await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: counterKey(keyId, day) },
            UpdateExpression: 'SET suspendedUntil = :until, keyId = :keyId, #day = :day, expiresAt = if_not_exists(expiresAt, :expiresAt)',
            ExpressionAttributeNames: { '#day': 'day' },
            ExpressionAttributeValues: { ':until': until, ':keyId': keyId, ':day': day, ':expiresAt': until + RETENTION_SECONDS },
          }),
        ),
      );
    }
  }

  private async conditionalUpdate(
    keyId: string,
    day: string,
    update: Pick<
      UpdateCommand['input'],
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
    >,
  ): Promise<{ updated: true; item: CounterItem } | { updated: false; item: CounterItem | undefined }> {
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: counterKey(keyId, day) },
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
        const old = (error as Error & { Item?: Record<string, AttributeValue> }).Item;
        return { updated: false, item: old ? (unmarshall(old) as CounterItem) : undefined };
      }
      throw error;
    }
  }
}

function counted(limits: PlanLimits, item: CounterItem): CountOutcome {
  return { kind: 'counted', minuteCount: Number(item.minuteCount), dayCount: Number(item.dayCount), limits };
}

/** The UpdateItem that counts one request: in the item's current minute, or starting a new one. */
function countUpdate(input: {
  keyId: string;
  limits: PlanLimits;
  windows: Windows;
  minuteStart: number;
  sameMinute: boolean;
  nowSeconds: number;
  requestId: string;
}) {
  const values = {
    ':one': 1,
    ':minute': input.minuteStart,
    ':perMinute': input.limits.perMinute,
    ':perDay': input.limits.perDay,
    ':now': input.nowSeconds,
    ':requestId': input.requestId,
  };
  const always = `${notSuspended} AND ${keyUsable} AND ${samePlan} AND ${notCountedYet}`;
  if (input.sameMinute) {
    return {
      UpdateExpression: 'SET minuteCount = minuteCount + :one, dayCount = dayCount + :one, lastRequestAt = :now, lastCountId = :requestId',
      ConditionExpression: `minuteStart = :minute AND minuteCount < :perMinute AND dayCount < :perDay AND ${always}`,
      ExpressionAttributeValues: values,
    };
  }
  return {
    UpdateExpression:
      'SET minuteStart = :minute, minuteCount = :one, dayCount = if_not_exists(dayCount, :zero) + :one, lastRequestAt = :now, lastCountId = :requestId, keyId = :keyId, #day = :day, expiresAt = :expiresAt',
    ConditionExpression: `(attribute_not_exists(minuteStart) OR minuteStart < :minute) AND (attribute_not_exists(dayCount) OR dayCount < :perDay) AND ${always}`,
    ExpressionAttributeNames: { '#day': 'day' },
    ExpressionAttributeValues: {
      ...values,
      ':zero': 0,
      ':keyId': input.keyId,
      ':day': input.windows.day,
      ':expiresAt': input.windows.dayEnd + RETENTION_SECONDS,
    },
  };
}

/** What the key tool changed about a key, for the functions to apply at once. */
export type KeyStateChange = { revoked: true } | { expiresAtSeconds: number } | { limits: PlanLimits };

/**
 * The updates (for a TransactWriteItems beside the key's own update) that copy
 * a key's new state onto its counter items for every UTC day from `fromSeconds`
 * until `untilSeconds`: the span in which a cached authorizer answer could
 * still let the key in with its old state. Later days need nothing: by then
 * the authorizer reads the key afresh.
 */
export function keyStateUpdates(tableName: string, keyId: string, change: KeyStateChange, fromSeconds: number, untilSeconds: number) {
  const set =
    'revoked' in change
      ? { expression: 'keyRevoked = :true', values: { ':true': true } }
      : 'expiresAtSeconds' in change
        ? { expression: 'keyExpiresAt = :keyExpiresAt', values: { ':keyExpiresAt': change.expiresAtSeconds } }
        : {
            expression: 'keyPerMinute = :keyPerMinute, keyPerDay = :keyPerDay',
            values: { ':keyPerMinute': change.limits.perMinute, ':keyPerDay': change.limits.perDay },
          };
  return daysBetween(fromSeconds, untilSeconds).map((day) => ({
    Update: {
      TableName: tableName,
      Key: { pk: counterKey(keyId, day.day) },
      UpdateExpression: `SET ${set.expression}, keyId = :keyId, #day = :day, expiresAt = if_not_exists(expiresAt, :expiresAt)`,
      ExpressionAttributeNames: { '#day': 'day' },
      ExpressionAttributeValues: { ...set.values, ':keyId': keyId, ':day': day.day, ':expiresAt': day.endSeconds + RETENTION_SECONDS },
    },
  }));
}

function daysBetween(fromSeconds: number, untilSeconds: number): { day: string; endSeconds: number }[] {
  const days: { day: string; endSeconds: number }[] = [];
  for (let start = Math.floor(fromSeconds / 86_400) * 86_400; start <= untilSeconds; start += 86_400) {
    days.push({ day: new Date(start * 1000).toISOString().slice(0, 10), endSeconds: start + 86_400 });
  }
  return days;
}

export function counterKey(keyId: string, day: string): string {
  return `${keyId}#${day}`;
}
