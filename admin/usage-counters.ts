import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoCall } from '../functions/data/dynamo-errors';
import type { ApiKeyRecord } from '../functions/domain/api-keys';
import { COUNTER_RETENTION_DAYS, counterKey } from '../functions/rate-limit';

/** Counters are kept this long after their day. */
export { COUNTER_RETENTION_DAYS };

export interface DayUsage {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Requests answered (a 429 counts toward no window, a 503 is given back); see UsageCounters for what an instance still holds. */
  requests: number;
  /** Unix seconds of the day's last served request. */
  lastRequestAt?: number;
  /** When the rate limiter's ban of the key (of its counters: a rotation's keys are banned together) ends, in milliseconds, if it banned it that day. */
  suspendedUntilMs?: number;
}

/**
 * Reads the rate limiter's counter items: one GetItem per customer and day,
 * never a Scan. The day's count is what the limiter granted, net of what was
 * given back: the requests answered, plus allowance a function instance still
 * holds or held and never used (its spare: at most a tenth of the minute's
 * limit in all, docs/architecture.md). Exact for a customer whose requests
 * one instance answers one at a time (the limiter then takes no spare: a
 * quiet key is counted request by request). The counters are the customer's,
 * so every secret of it shows the same usage.
 */
export class UsageCounters {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async day(key: Pick<ApiKeyRecord, 'keyId' | 'customerId' | 'plan' | 'customLimits'>, day: string): Promise<DayUsage> {
    const items = await Promise.all(
      [counterKey(key.customerId, day)].map((pk) =>
        dynamoCall(() =>
          this.db.send(
            new GetCommand({
              TableName: this.tableName,
              Key: { pk },
              ProjectionExpression: 'dayGranted, lastRequestAt, suspendedUntil',
              ConsistentRead: true,
            }),
          ),
        ).then(({ Item }) => Item as { dayGranted?: number; lastRequestAt?: number; suspendedUntil?: number } | undefined),
      ),
    );
    const lastRequestAt = Math.max(...items.map((item) => Number(item?.lastRequestAt ?? Number.NEGATIVE_INFINITY)));
    const suspendedUntil = Math.max(...items.map((item) => Number(item?.suspendedUntil ?? Number.NEGATIVE_INFINITY)));
    return {
      day,
      requests: items.reduce((sum, item) => sum + Number(item?.dayGranted ?? 0), 0),
      ...(Number.isFinite(lastRequestAt) ? { lastRequestAt } : {}),
      ...(Number.isFinite(suspendedUntil) ? { suspendedUntilMs: suspendedUntil * 1000 } : {}),
    };
  }
}
