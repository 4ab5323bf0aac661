import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { IdempotencyRecord, IdempotencyRecords } from '../domain/pet-creation';
import type { Clock } from '../runtime/clock';
import { logger } from '../runtime/logger';
import { conditionalPut } from './conditional-check';
import { dynamoCall } from './dynamo-errors';

/**
 * Idempotency-Key records in the idempotency table, with one conditional write
 * per step (the rules are the domain's: functions/domain/pet-creation.ts).
 * Records are never deleted: they expire by TTL.
 *
 * Why not TransactWriteItems with a ClientRequestToken: the token makes
 * identical calls idempotent only for 10 minutes after the first completes,
 * and the response carries no item to tell a repeat from a conflict
 * ("TransactWriteItems", Amazon DynamoDB API Reference,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html);
 * a client's retry comes through another request, maybe another container,
 * maybe later. A conditional write returns the item that failed its condition
 * when asked (ReturnValuesOnConditionCheckFailure: ALL_OLD, "PutItem", same
 * reference, https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html).
 */
export class IdempotencyRepository implements IdempotencyRecords {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock,
  ) {}

  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    const nowSeconds = Math.floor(this.clock() / 1000);
    return conditionalPut(
      this.db,
      {
        TableName: this.tableName,
        Item: record,
        // TTL deletion lags expiry (up to a few days), so an expired record counts as absent.
        ConditionExpression: 'attribute_not_exists(id) OR expiration < :now',
        ExpressionAttributeValues: { ':now': nowSeconds },
      },
      // Ours (the SDK repeated the claim) or an earlier attempt's: either way, the stored one.
      () => true,
    );
  }

  async release(recordId: string, petId: number): Promise<void> {
    await this.update(recordId, petId, 'SET heldUntil = :zero', { ':zero': 0 }).catch((error: unknown) => {
      // Not ours (the claim never landed) or not answered: either way nothing to undo.
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException'))
        logger.warn('idempotency hold not released; it runs out with the function timeout', { error: describe(error) });
      throw error;
    });
  }

  async complete(recordId: string, petId: number): Promise<void> {
    await this.update(recordId, petId, 'SET #status = :completed', { ':completed': 'COMPLETED' }, { '#status': 'status' }).catch(
      (error: unknown) => {
        logger.warn('idempotency record not marked completed', { error: describe(error) });
        throw error;
      },
    );
  }

  private async update(
    recordId: string,
    petId: number,
    expression: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id: recordId },
          UpdateExpression: expression,
          // Only the record of this pet: never one that expired and was claimed anew, nor another attempt's.
          ConditionExpression: 'pet.id = :petId',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ...values, ':petId': petId },
        }),
      ),
    );
  }
}

function describe(error: unknown): Error | string {
  return error instanceof Error ? error : String(error);
}
