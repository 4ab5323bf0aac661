import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { petIndexes } from '../../definitions/tables';
import type { BlockQueries, BlockRead } from '../domain/list-ports';
import type { Pet, PetStatus } from '../domain/pet';
import type { PetStore } from '../domain/pets';
import { conditionalPut } from './conditional-check';
import { dynamoCall } from './dynamo-errors';
import { type PetLayout, petLayout, shardAttributes, shardKey } from './pet-layout';

export interface PetRepositoryOptions {
  layout?: PetLayout;
  /**
   * The pets this repository writes and reads: the customers' (none), or the
   * deployment check's (definitions/deployment-check.ts). A pet of a namespace
   * is stored with it (`namespace`) and under list index keys that start with
   * it; a read of a pet of another namespace finds nothing.
   */
  namespace?: string;
}

/**
 * Reads and writes pets: the only module that knows how pets are stored
 * (functions/data/pet-layout.ts). It runs no list algorithm: a list page is
 * the use case's (functions/domain/pet-list.ts), which reads blocks through this.
 */
export class PetRepository implements PetStore, BlockQueries {
  readonly layout: PetLayout;
  private readonly namespace: string | undefined;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: PetRepositoryOptions = {},
  ) {
    this.layout = options.layout ?? petLayout;
    this.namespace = options.namespace;
  }

  async get(id: number): Promise<Pet | undefined> {
    const { Item } = await dynamoCall(() => this.db.send(new GetCommand({ TableName: this.tableName, Key: { id }, ConsistentRead: true })));
    return Item && Item.namespace === this.namespace ? toPet(Item) : undefined;
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
    await conditionalPut(
      this.db,
      {
        TableName: this.tableName,
        Item: { ...pet, ...shardAttributes(pet, this.layout, this.namespace), ...this.stamp(), createdAt, writeToken },
        ConditionExpression: 'attribute_not_exists(id)',
      },
      (existing) => existing.writeToken === writeToken,
    );
  }

  /** The attribute that says which namespace a pet is of; none for the customers' pets. */
  private stamp(): { namespace?: string } {
    return this.namespace === undefined ? {} : { namespace: this.namespace };
  }

  /** One Query of one block's range in its shard of the list of all pets, or of one status. */
  async queryBlock(block: number, from: number, to: number, want: number, status: PetStatus | undefined): Promise<BlockRead> {
    const { Items = [] } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: status === undefined ? petIndexes.byListShard : petIndexes.byStatusShard,
          KeyConditionExpression: '#shard = :shard AND id BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#shard': status === undefined ? 'listShard' : 'statusShard' },
          ExpressionAttributeValues: { ':shard': shardKey(block, status, this.layout, this.namespace), ':from': from, ':to': to },
          Limit: want,
        }),
      ),
    );
    return { pets: Items.map(toPet), oldestCreatedAt: Math.min(...Items.map((item) => Date.parse(String(item.createdAt)))) };
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
