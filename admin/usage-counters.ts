import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoCall } from '../functions/data/dynamo-errors';
import { COUNTER_RETENTION_DAYS, counterKey } from '../functions/data/rate-limit-repository';
import { type ApiKeyRecord, countersIdOf } from '../functions/domain/api-keys';

/** Counters are kept this long after their day. */
export { COUNTER_RETENTION_DAYS };

export interface DayUsage {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Requests served (refused ones count toward no window). */
  requests: number;
  /** Unix seconds of the day's last served request. */
  lastRequestAt?: number;
  /** When the rate limiter's ban of the key (of its counters: a rotation's keys are banned together) ends, in milliseconds, if it banned it that day. */
  suspendedUntilMs?: number;
}

/**
 * Reads the rate limiter's counter items: one GetItem per set of counters and
 * day, never a Scan. The day's count is what the limiter's leases granted: a
 * request served, or allowance an instance held and never used (at most the
 * spare of the instances that went idle: docs/clients.md). A rotation's keys share their counters, so
 * each of them shows the customer's usage: the requests of both secrets.
 */
export class UsageCounters {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async day(key: Pick<ApiKeyRecord, 'keyId' | 'countersId' | 'plan' | 'customLimits'>, day: string): Promise<DayUsage> {
    const items = await Promise.all(
      [counterKey(countersIdOf(key), day)].map((pk) =>
        dynamoCall(() =>
          this.db.send(
            new GetCommand({
              TableName: this.tableName,
              Key: { pk },
              ProjectionExpression: 'dayCount, lastRequestAt, suspendedUntil',
              ConsistentRead: true,
            }),
          ),
        ).then(({ Item }) => Item as { dayCount?: number; lastRequestAt?: number; suspendedUntil?: number } | undefined),
      ),
    );
    const lastRequestAt = Math.max(...items.map((item) => Number(item?.lastRequestAt ?? Number.NEGATIVE_INFINITY)));
    const suspendedUntil = Math.max(...items.map((item) => Number(item?.suspendedUntil ?? Number.NEGATIVE_INFINITY)));
    return {
      day,
      requests: items.reduce((sum, item) => sum + Number(item?.dayCount ?? 0), 0),
      ...(Number.isFinite(lastRequestAt) ? { lastRequestAt } : {}),
      ...(Number.isFinite(suspendedUntil) ? { suspendedUntilMs: suspendedUntil * 1000 } : {}),
    };
  }
}
