import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoCall } from '../data/dynamo-errors';
import { counterKey } from './counter-table';
import { windowsAt } from './windows';

/**
 * Reads a customer's temporary ban as the rate limiter records it:
 * `bannedUntil` (Unix seconds) on the counters item of the UTC day
 * (rate-limit/counter-table.ts). Only the authorizer reads it, with GetItem alone
 * (definitions/routes.ts, the authorizer's access): it never writes a counter.
 * An eventually consistent read: a ban a moment old may be missed, and then the
 * operation's own limiter refuses the key, as it always does.
 */
export class BanReader {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Until when (Unix seconds) the customer whose counters are `customerId` is banned, or undefined. */
  async bannedUntil(customerId: string, nowMs: number): Promise<number | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { pk: counterKey(customerId, windowsAt(nowMs).day) },
          ProjectionExpression: 'bannedUntil',
        }),
      ),
    );
    const until = Item?.bannedUntil;
    return typeof until === 'number' ? until : undefined;
  }
}

/**
 * Whether the authorizer refuses a banned customer's key itself, with a Deny
 * that API Gateway caches (so the ban costs no operation Lambda), instead of
 * letting the operation's rate limiter answer 429 `key_suspended`.
 *
 * API Gateway caches an authorizer's answer for one TTL per authorizer, not per
 * answer ("Use API Gateway Lambda authorizers", authorization caching,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-use-lambda-authorizer.html):
 * a Deny given when less of the ban remains than that TTL would still refuse
 * the key after its ban ended. So the gateway refuses only while the ban
 * outlasts the TTL plus the time the answer may take to reach API Gateway,
 * whose cache entry starts then (at most the authorizer's timeout); for the
 * ban's last minutes the operation's limiter answers, with the exact Retry-After.
 */
export function refusedAtGateway(
  bannedUntilSeconds: number | undefined,
  nowMs: number,
  cache: { ttlSeconds: number; answeredWithinSeconds: number },
): boolean {
  if (bannedUntilSeconds === undefined) return false;
  return bannedUntilSeconds * 1000 - nowMs > (cache.ttlSeconds + cache.answeredWithinSeconds) * 1000;
}
