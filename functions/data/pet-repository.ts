import { randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { petIndexes } from '../../definitions/tables';
import type { Pet, PetStatus } from '../domain/pet';
import type { PetStore } from '../domain/pets';
import { dynamoCall } from './dynamo-errors';

/** Value of `listKey` on every pet: the partition of the byList index. */
const LIST_KEY = 'pets';
/** The id allocator lives in the pets table under an id no pet can have. */
const ALLOCATOR_ID = 0;

/** Reads and writes pets. The only module that knows how pets are stored. */
export class PetRepository implements PetStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(id: number): Promise<Pet | undefined> {
    const { Item } = await dynamoCall(() => this.db.send(new GetCommand({ TableName: this.tableName, Key: { id }, ConsistentRead: true })));
    return Item ? toPet(Item) : undefined;
  }

  /**
   * Writes a new pet; the condition makes sure an existing pet is never
   * overwritten. `writeToken` names the request the write is for: when the SDK
   * repeats a write whose answer it lost and the first attempt had landed, the
   * repeat fails its condition on a pet carrying our token, which is success.
   * Any other pet with this id is an error (ids are never handed out twice).
   * Without a token the write is its own (a fresh random token).
   */
  async insert(pet: Pet, createdAt: string, writeToken: string = randomUUID()): Promise<void> {
    try {
      await dynamoCall(() =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...pet, listKey: LIST_KEY, createdAt, writeToken },
            ConditionExpression: 'attribute_not_exists(id)',
            // PutItem returns the item that failed the condition when asked: no second read
            // (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html).
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
    } catch (error) {
      const existing = (error as { Item?: Record<string, AttributeValue> }).Item;
      if (
        error instanceof Error &&
        error.name === 'ConditionalCheckFailedException' &&
        existing &&
        unmarshall(existing).writeToken === writeToken
      )
        return;
      throw error;
    }
  }

  /**
   * Up to `limit` pets with ids above `afterId`, ascending, and whether more
   * exist. One Query on an index whose cost depends on the page, not the table.
   */
  async listAfter(afterId: number, limit: number, status: PetStatus | undefined): Promise<{ pets: Pet[]; hasMore: boolean }> {
    const byStatus = status !== undefined;
    const { Items = [] } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: byStatus ? petIndexes.byStatus : petIndexes.byList,
          KeyConditionExpression: byStatus ? '#status = :partition AND id > :afterId' : 'listKey = :partition AND id > :afterId',
          ExpressionAttributeNames: byStatus ? { '#status': 'status' } : undefined,
          ExpressionAttributeValues: { ':partition': byStatus ? status : LIST_KEY, ':afterId': afterId },
          // One more than asked tells whether a next page exists, without an empty last page.
          Limit: limit + 1,
        }),
      ),
    );
    return { pets: Items.slice(0, limit).map(toPet), hasMore: Items.length > limit };
  }

  /**
   * Reserves `count` fresh ids in one atomic update and returns the first. Ids
   * of a block that is never used are skipped, never reused.
   */
  async reserveIds(count: number): Promise<number> {
    const { Attributes } = await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id: ALLOCATOR_ID },
          UpdateExpression: 'ADD lastReservedId :count',
          ExpressionAttributeValues: { ':count': count },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    const lastReservedId = Number(Attributes?.lastReservedId);
    return lastReservedId - count + 1;
  }
}

function toPet(item: Record<string, unknown>): Pet {
  return {
    id: Number(item.id),
    name: String(item.name),
    categoryId: Number(item.categoryId),
    status: item.status as PetStatus,
  };
}
