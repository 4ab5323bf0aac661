import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import type { CountOutcome, Windows } from '../domain/rate-limit';
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
 */
interface CounterItem {
  dayCount?: number;
  minuteStart?: number;
  minuteCount?: number;
  refusedMinute?: number;
  refusedCount?: number;
  suspendedUntil?: number;
}

/**
 * Each failed attempt means another request changed the item first (and so
 * made progress); the bound only guards against a bug looping forever.
 */
const MAX_ATTEMPTS = 6;

export class RateLimitRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Counts one request against both windows if neither is exhausted and the key is not suspended. */
  async count(keyId: string, limits: PlanLimits, windows: Windows, nowMs: number): Promise<CountOutcome> {
    const nowSeconds = Math.floor(nowMs / 1000);
    let minuteStart = windows.minuteStart;
    let sameMinute = true;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const values = { ':one': 1, ':minute': minuteStart, ':perDay': limits.perDay, ':now': nowSeconds };
      const notSuspended = '(attribute_not_exists(suspendedUntil) OR suspendedUntil <= :now)';
      const update = sameMinute
        ? {
            UpdateExpression: 'SET minuteCount = minuteCount + :one, dayCount = dayCount + :one, lastRequestAt = :now',
            ConditionExpression: `minuteStart = :minute AND minuteCount < :perMinute AND dayCount < :perDay AND ${notSuspended}`,
            ExpressionAttributeValues: { ...values, ':perMinute': limits.perMinute },
          }
        : {
            UpdateExpression:
              'SET minuteStart = :minute, minuteCount = :one, dayCount = if_not_exists(dayCount, :zero) + :one, lastRequestAt = :now, keyId = :keyId, #day = :day, expiresAt = :expiresAt',
            ConditionExpression: `(attribute_not_exists(minuteStart) OR minuteStart < :minute) AND (attribute_not_exists(dayCount) OR dayCount < :perDay) AND ${notSuspended}`,
            ExpressionAttributeNames: { '#day': 'day' },
            ExpressionAttributeValues: {
              ...values,
              ':zero': 0,
              ':keyId': keyId,
              ':day': windows.day,
              ':expiresAt': windows.dayEnd + RETENTION_SECONDS,
            },
          };
      const result = await this.conditionalUpdate(keyId, windows.day, update);
      if (result.updated) {
        return { kind: 'counted', minuteCount: Number(result.item.minuteCount), dayCount: Number(result.item.dayCount) };
      }
      const old = result.item;
      if (old?.suspendedUntil !== undefined && old.suspendedUntil > nowSeconds) return { kind: 'suspended', until: old.suspendedUntil };
      if ((old?.dayCount ?? 0) >= limits.perDay) return { kind: 'day_exhausted' };
      if (old?.minuteStart === undefined || old.minuteStart < minuteStart) {
        sameMinute = false;
        continue;
      }
      // A request stamped a later minute than ours (clocks of two containers
      // differ by a few ms): count ours in that minute.
      minuteStart = old.minuteStart;
      if ((old.minuteCount ?? 0) >= limits.perMinute) return { kind: 'minute_exhausted' };
      sameMinute = true;
    }
    throw new Error('Rate-limit counter kept changing under us');
  }

  /** Counts a refused request of this minute and returns how many there were so far. */
  async countRefusal(keyId: string, windows: Windows): Promise<number> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const sameMinute = attempt % 2 === 0;
      const result = await this.conditionalUpdate(keyId, windows.day, {
        UpdateExpression: sameMinute
          ? 'SET refusedCount = refusedCount + :one'
          : 'SET refusedMinute = :minute, refusedCount = :one',
        ConditionExpression: sameMinute
          ? 'refusedMinute = :minute'
          : 'attribute_not_exists(refusedMinute) OR refusedMinute < :minute',
        ExpressionAttributeValues: { ':one': 1, ':minute': windows.minuteStart },
      });
      if (result.updated) return Number(result.item.refusedCount);
    }
    throw new Error('Refusal counter kept changing under us');
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
    update: Pick<UpdateCommand['input'], 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>,
  ): Promise<{ updated: true; item: CounterItem } | { updated: false; item: CounterItem | undefined }> {
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: counterKey(keyId, day) },
            ...update,
            ReturnValues: 'ALL_NEW',
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

export function counterKey(keyId: string, day: string): string {
  return `${keyId}#${day}`;
}
