import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoCall } from '../functions/data/dynamo-errors';
import { COUNTER_RETENTION_DAYS, counterKey } from '../functions/data/rate-limit-repository';

/** Counters are kept this long after their day. */
export { COUNTER_RETENTION_DAYS };

export interface DayUsage {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Requests served (refused ones count toward no window). */
  requests: number;
  /** Unix seconds of the day's last served request. */
  lastRequestAt?: number;
  /** When the rate limiter's ban of the key ends (milliseconds), if it banned the key that day. */
  suspendedUntilMs?: number;
}

/** Reads the rate limiter's counter items: one GetItem per key and day, never a Scan. */
export class UsageCounters {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async day(keyId: string, day: string): Promise<DayUsage> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { pk: counterKey(keyId, day) },
          ProjectionExpression: 'dayCount, lastRequestAt, suspendedUntil',
          ConsistentRead: true,
        }),
      ),
    );
    const item = Item as { dayCount?: number; lastRequestAt?: number; suspendedUntil?: number } | undefined;
    return {
      day,
      requests: Number(item?.dayCount ?? 0),
      ...(item?.lastRequestAt !== undefined ? { lastRequestAt: Number(item.lastRequestAt) } : {}),
      ...(item?.suspendedUntil !== undefined ? { suspendedUntilMs: Number(item.suspendedUntil) * 1000 } : {}),
    };
  }
}
