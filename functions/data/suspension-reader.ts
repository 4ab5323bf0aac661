import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { windowsAt } from '../domain/rate-limit';
import { dynamoCall } from './dynamo-errors';
import { counterKey } from './rate-limit-repository';

/**
 * Reads a customer's temporary ban as the rate limiter records it:
 * `suspendedUntil` (Unix seconds) on the counters item of the UTC day
 * (rate-limit-repository.ts). Only the authorizer reads it, with GetItem alone
 * (definitions/routes.ts, the authorizer's access): it never writes a counter.
 * An eventually consistent read: a ban a moment old may be missed, and then the
 * operation's own limiter refuses the key, as it always does.
 */
export class SuspensionReader {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Until when (Unix seconds) the customer whose counters are `customerId` is banned, or undefined. */
  async suspendedUntil(customerId: string, nowMs: number): Promise<number | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { pk: counterKey(customerId, windowsAt(nowMs).day) },
          ProjectionExpression: 'suspendedUntil',
        }),
      ),
    );
    const until = Item?.suspendedUntil;
    return typeof until === 'number' ? until : undefined;
  }
}
