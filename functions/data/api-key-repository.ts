import { randomUUID } from 'node:crypto';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  type UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { limitsFor, type PlanLimits, type PlanName } from '../../definitions/plans';
import { authorizer } from '../../definitions/routes';
import { apiKeyIndexes } from '../../definitions/tables';
import type { ApiKeyRecord } from '../domain/api-keys';
import { conditionalPut } from './conditional-check';
import { dynamoCall } from './dynamo-errors';
import { type KeyStateChange, keyStateUpdates } from './rate-limit-repository';

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
 * interleave half of one change with half of another. Every change also
 * reaches the key's rate-limit counters in the same transaction, where the
 * functions see it at the key's next request, whatever the authorizer cached.
 */
export class ApiKeyRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Needed by the changes (revoke, rotate, plan), which reach the functions through the key's counters. */
    private readonly rateLimitsTable?: string,
  ) {}

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { keyHash }, ConsistentRead: true })),
    );
    return Item as ApiKeyRecord | undefined;
  }

  /**
   * Stores a new key. Safe to repeat: a repeat of a write that landed (the SDK's
   * retry after a lost answer, or the key tool's own) finds this very key and
   * succeeds; any other record with this hash is an error.
   */
  async insert(record: ApiKeyRecord): Promise<void> {
    await conditionalPut(
      this.db,
      { TableName: this.tableName, Item: record, ConditionExpression: 'attribute_not_exists(keyHash)' },
      (existing) => existing.keyId === record.keyId,
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
      const page = await dynamoCall(() => this.db.send(new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: startKey })));
      records.push(...((page.Items ?? []) as ApiKeyRecord[]));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return records;
  }

  /**
   * Moves a key that is not revoked to another plan (custom limits for
   * enterprise, none otherwise). The new limits are copied onto the key's
   * counters in the same transaction: the functions apply them to the next request.
   */
  async changePlan(
    record: ApiKeyRecord,
    change: { plan: PlanName; customLimits?: PlanLimits },
    updatedAt: string,
    requestToken?: string,
  ): Promise<ApiKeyRecord> {
    const { customLimits: _previous, ...rest } = record;
    const after: ApiKeyRecord = {
      ...rest,
      plan: change.plan,
      updatedAt,
      ...(change.customLimits ? { customLimits: change.customLimits } : {}),
    };
    await this.updateWithCounters(
      record,
      {
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
      },
      this.counterUpdates(record, { limits: limitsFor(change.plan, change.customLimits) }, Date.parse(updatedAt)),
      requestToken,
    );
    return after;
  }

  /** Revokes a key for good: the functions refuse it from its next request on, the authorizer once its cache expires. */
  async revoke(record: ApiKeyRecord, updatedAt: string, requestToken?: string): Promise<ApiKeyRecord> {
    await this.updateWithCounters(
      record,
      {
        UpdateExpression: 'SET #status = :revoked, updatedAt = :updatedAt',
        ConditionExpression: '#status <> :revoked',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':updatedAt': updatedAt },
      },
      this.counterUpdates(record, { revoked: true }, Date.parse(updatedAt)),
      requestToken,
    );
    return { ...record, status: 'revoked', updatedAt };
  }

  /**
   * Stores a rotated key's successor, sets the predecessor's expiry and copies
   * that expiry onto the predecessor's counters, in one transaction: all happen
   * or none. The predecessor must be active and not rotated already.
   */
  async insertSuccessor(
    successor: ApiKeyRecord,
    predecessor: ApiKeyRecord,
    predecessorExpiresAt: string,
    requestToken?: string,
  ): Promise<void> {
    const expiresAtMs = Date.parse(predecessorExpiresAt);
    await this.transact(
      predecessor.keyId,
      [
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
        ...this.counterUpdates(predecessor, { expiresAtSeconds: Math.floor(expiresAtMs / 1000) }, expiresAtMs),
      ],
      requestToken,
    );
  }

  /**
   * The counter updates that carry a key's new state to the functions: on the
   * key's counter items of the days from `fromMs` until the authorizer's cache
   * (which may still hold the old state) has expired.
   */
  private counterUpdates(record: ApiKeyRecord, change: KeyStateChange, fromMs: number) {
    if (!this.rateLimitsTable) throw new Error('ApiKeyRepository needs the rate-limits table to change a key');
    const fromSeconds = Math.floor(fromMs / 1000);
    return keyStateUpdates(this.rateLimitsTable, record, change, fromSeconds, fromSeconds + authorizer.resultsCacheTtlSeconds);
  }

  /** Updates the record only if it is still as it was read, together with its counters. */
  private async updateWithCounters(
    record: ApiKeyRecord,
    update: Required<
      Pick<UpdateCommand['input'], 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>
    >,
    counterUpdates: ReturnType<ApiKeyRepository['counterUpdates']>,
    requestToken: string | undefined,
  ): Promise<void> {
    await this.transact(
      record.keyId,
      [
        {
          Update: {
            TableName: this.tableName,
            Key: { keyHash: record.keyHash },
            UpdateExpression: update.UpdateExpression,
            ConditionExpression: `attribute_exists(keyHash) AND updatedAt = :seen AND (${update.ConditionExpression})`,
            ExpressionAttributeNames: update.ExpressionAttributeNames,
            ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':seen': record.updatedAt },
          },
        },
        ...counterUpdates,
      ],
      requestToken,
    );
  }

  /**
   * One transaction. Its ClientRequestToken makes a repeat within 10 minutes —
   * the SDK's retry after a lost answer, or the key tool's own retry with the
   * same token — succeed without applying it twice, where the repeat would
   * otherwise fail its `updatedAt` condition against our own landed change
   * ("TransactWriteItems", Amazon DynamoDB API Reference,
   * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
   */
  private async transact(
    keyId: string,
    items: NonNullable<TransactWriteCommand['input']['TransactItems']>,
    requestToken: string = randomUUID(),
  ): Promise<void> {
    try {
      await dynamoCall(() => this.db.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: requestToken })));
    } catch (error) {
      if (error instanceof Error && error.name === 'TransactionCanceledException') throw new ApiKeyChangedError(keyId);
      throw error;
    }
  }
}
