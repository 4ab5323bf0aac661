import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoCall } from '../data/dynamo-errors';
import { COUNTER_RETENTION_DAYS, counterKey } from './counter-table';
import { windowsAt } from './windows';

/** Counters are kept this long after their day. */
export { COUNTER_RETENTION_DAYS };

const DAY_MS = 86_400_000;

export interface DayUsage {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Requests answered (a 429 counts toward no window, a 503 is given back); see UsageCounters for what an instance still holds. */
  requests: number;
  /** Unix seconds of the day's last served request. */
  lastServedAt?: number;
  /** When the rate limiter's ban of the key (of its counters: a rotation's keys are banned together) ends, in milliseconds, if it banned it that day. */
  bannedUntilMs?: number;
}

/**
 * What `usage` and `show` report of a customer (decision 14): read from the
 * rate limiter's counter items, which nothing outside functions/rate-limit/
 * reads or writes. Reads the rate limiter's counter items: one GetItem per customer and day,
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

  /** `count` UTC days (`YYYY-MM-DD`, as the counters name them) ending at `now`'s, newest first. */
  static daysBack(now: number, count: number): string[] {
    return Array.from({ length: count }, (_, index) => windowsAt(now - index * DAY_MS).day);
  }

  async day(customer: { customerId: string }, day: string): Promise<DayUsage> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { pk: counterKey(customer.customerId, day) },
          ProjectionExpression: 'dayGranted, lastServedAt, bannedUntil',
          ConsistentRead: true,
        }),
      ),
    );
    const item = Item as { dayGranted?: number; lastServedAt?: number; bannedUntil?: number } | undefined;
    return {
      day,
      requests: Number(item?.dayGranted ?? 0),
      ...(item?.lastServedAt !== undefined ? { lastServedAt: Number(item.lastServedAt) } : {}),
      ...(item?.bannedUntil !== undefined ? { bannedUntilMs: Number(item.bannedUntil) * 1000 } : {}),
    };
  }
}
