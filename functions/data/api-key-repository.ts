import {
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { PlanLimits, PlanName } from '../../definitions/plans';
import { apiKeyIndexes } from '../../definitions/tables';
import type { ApiKeyRecord } from '../domain/api-keys';
import { dynamoCall } from './dynamo-errors';

/**
 * A conditional write found the key gone, or changed since it was read (by
 * another administrator at the same moment): nothing was written.
 */
export class ApiKeyChangedError extends Error {
  constructor(readonly keyId: string) {
    super(`API key ${keyId} changed or disappeared while it was being updated; nothing was written`);
    this.name = 'ApiKeyChangedError';
  }
}

/**
 * Reads and writes API key records, which are keyed by the hash of the secret.
 *
 * The request path only reads by hash (the authorizer). Everything else here
 * serves key administration (admin/): every update is conditional on the
 * record being as it was read (`updatedAt`), so two administrators can never
 * interleave half of one change with half of another.
 */
export class ApiKeyRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { keyHash }, ConsistentRead: true })),
    );
    return Item as ApiKeyRecord | undefined;
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({ TableName: this.tableName, Item: record, ConditionExpression: 'attribute_not_exists(keyHash)' }),
      ),
    );
  }

  /**
   * The key with this id. The `byKeyId` index gives its hash (indexes are
   * eventually consistent); the record itself is then read consistently.
   */
  async findById(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { Items } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: apiKeyIndexes.byKeyId,
          KeyConditionExpression: 'keyId = :keyId',
          ExpressionAttributeValues: { ':keyId': keyId },
          ProjectionExpression: 'keyHash',
        }),
      ),
    );
    const keyHash = (Items?.[0] as Pick<ApiKeyRecord, 'keyHash'> | undefined)?.keyHash;
    return keyHash === undefined ? undefined : this.findByHash(keyHash);
  }

  /**
   * Every key. A Scan, whose cost grows with the table: for the administrators'
   * listing only, never on a request path (no function is granted dynamodb:Scan).
   */
  async scanAll(): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamoCall(() =>
        this.db.send(new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: startKey })),
      );
      records.push(...((page.Items ?? []) as ApiKeyRecord[]));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return records;
  }

  /** Moves a key that is not revoked to another plan (custom limits for enterprise, none otherwise). */
  async changePlan(record: ApiKeyRecord, change: { plan: PlanName; customLimits?: PlanLimits }, updatedAt: string): Promise<ApiKeyRecord> {
    return this.conditionalUpdate(record, {
      UpdateExpression: change.customLimits
        ? 'SET #plan = :plan, customLimits = :customLimits, updatedAt = :updatedAt'
        : 'SET #plan = :plan, updatedAt = :updatedAt REMOVE customLimits',
      ConditionExpression: '#status <> :revoked',
      ExpressionAttributeNames: { '#plan': 'plan', '#status': 'status' },
      ExpressionAttributeValues: {
        ':plan': change.plan,
        ':revoked': 'revoked',
        ':updatedAt': updatedAt,
        ...(change.customLimits ? { ':customLimits': change.customLimits } : {}),
      },
    });
  }

  /** Revokes a key for good: the authorizer refuses it from then on. */
  async revoke(record: ApiKeyRecord, updatedAt: string): Promise<ApiKeyRecord> {
    return this.conditionalUpdate(record, {
      UpdateExpression: 'SET #status = :revoked, updatedAt = :updatedAt',
      ConditionExpression: '#status <> :revoked',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':revoked': 'revoked', ':updatedAt': updatedAt },
    });
  }

  /**
   * Stores a rotated key's successor and sets the predecessor's expiry, in one
   * transaction: either both happen or neither. The predecessor must be active
   * and not rotated already.
   */
  async insertSuccessor(successor: ApiKeyRecord, predecessor: ApiKeyRecord, predecessorExpiresAt: string): Promise<void> {
    try {
      await dynamoCall(() =>
        this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.tableName, Item: successor, ConditionExpression: 'attribute_not_exists(keyHash)' } },
              {
                Update: {
                  TableName: this.tableName,
                  Key: { keyHash: predecessor.keyHash },
                  UpdateExpression: 'SET expiresAt = :expiresAt, updatedAt = :updatedAt',
                  ConditionExpression:
                    'attribute_exists(keyHash) AND updatedAt = :seen AND #status = :active AND attribute_not_exists(expiresAt)',
                  ExpressionAttributeNames: { '#status': 'status' },
                  ExpressionAttributeValues: {
                    ':expiresAt': predecessorExpiresAt,
                    ':updatedAt': successor.createdAt,
                    ':seen': predecessor.updatedAt,
                    ':active': 'active',
                  },
                },
              },
            ],
          }),
        ),
      );
    } catch (error) {
      if (error instanceof Error && error.name === 'TransactionCanceledException') throw new ApiKeyChangedError(predecessor.keyId);
      throw error;
    }
  }

  /** Updates the record only if it is still as it was read, and returns it as written. */
  private async conditionalUpdate(
    record: ApiKeyRecord,
    update: Required<Pick<UpdateCommand['input'], 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>>,
  ): Promise<ApiKeyRecord> {
    try {
      const { Attributes } = await dynamoCall(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { keyHash: record.keyHash },
            UpdateExpression: update.UpdateExpression,
            ConditionExpression: `attribute_exists(keyHash) AND updatedAt = :seen AND (${update.ConditionExpression})`,
            ExpressionAttributeNames: update.ExpressionAttributeNames,
            ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':seen': record.updatedAt },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return Attributes as ApiKeyRecord;
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') throw new ApiKeyChangedError(record.keyId);
      throw error;
    }
  }
}
