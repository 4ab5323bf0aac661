import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { petIndexes } from '../../definitions/tables';
import type { CounterBlocks } from '../domain/id-blocks';
import { type BlockRead, type ListItems, ListViews } from '../domain/list-views';
import type { Pet, PetStatus } from '../domain/pet';
import { walkPage } from '../domain/pet-walk';
import type { PetPage, PetStore } from '../domain/pets';
import { BlockCounter } from './block-counter';
import { conditionalPut } from './conditional-check';
import { dynamoCall } from './dynamo-errors';
import { blockOf, firstIdOf, type PetLayout, petLayout, shardKey } from './pet-layout';

export { MAX_BLOCKS_PER_PAGE } from '../domain/pet-walk';

export interface PetRepositoryOptions {
  layout?: PetLayout;
  /** The service's clock: createdAt and block lifetimes are on it, so sealing is judged on it. */
  clock?: () => number;
  /** Real elapsed time, for how long caches are trusted (a test clock may stand still). */
  cacheClock?: () => number;
  /** How many block ranges the instance keeps (RANGE_CACHE_ENTRIES by default: functions/domain/list-views.ts). */
  rangeCacheEntries?: number;
  /** Which copy of the block counter a read goes to; at random by default. */
  pickCopy?: (copies: number) => number;
}

/**
 * Reads and writes pets and the items that say which id blocks exist: the only
 * module that knows how pets are stored (functions/data/pet-layout.ts). A page
 * of a list is the walk's (functions/domain/pet-walk.ts) over this instance's
 * views (functions/domain/list-views.ts), which read through this.
 */
export class PetRepository implements PetStore, ListItems {
  readonly layout: PetLayout;
  private readonly blocks: BlockCounter;
  private readonly views: ListViews;
  /** Queries sent for list pages, and reads of which blocks exist (a copy of the block counter), for the bench and tests. */
  queriesSent = 0;
  frontierReadsSent = 0;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: PetRepositoryOptions = {},
  ) {
    this.layout = options.layout ?? petLayout;
    this.blocks = new BlockCounter(db, tableName, this.layout, options.pickCopy);
    this.views = new ListViews(this, {
      layout: this.layout,
      clock: options.clock ?? Date.now,
      // A monotonic clock: view ages are durations, and a test's clock may stand in for Date.now (local/lambda-runtime-worker.mjs).
      cacheClock: options.cacheClock ?? (() => performance.now()),
      rangeCacheEntries: options.rangeCacheEntries,
    });
  }

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
    await conditionalPut(
      this.db,
      {
        TableName: this.tableName,
        Item: { ...pet, ...this.shardAttributes(pet), createdAt, writeToken },
        ConditionExpression: 'attribute_not_exists(id)',
      },
      (existing) => existing.writeToken === writeToken,
    );
  }

  /** The index keys of a pet: its block's shard in the list of all pets and in its status's list. */
  shardAttributes(pet: Pick<Pet, 'id' | 'status'>): { listShard: string; statusShard: string } {
    const block = blockOf(pet.id, this.layout);
    return { listShard: shardKey(block, undefined, this.layout), statusShard: shardKey(block, pet.status, this.layout) };
  }

  /**
   * Up to `limit` pets with ids above `afterId`, ascending, and where the next
   * page starts (functions/domain/pet-walk.ts). Views of the newest pets serve
   * pages of walks begun before they were read
   * (`walkStartedAt`, the service's clock; by default none: all read afresh).
   */
  listAfter(afterId: number, limit: number, status: PetStatus | undefined, walkStartedAt = Number.POSITIVE_INFINITY): Promise<PetPage> {
    return walkPage({ afterId, limit, status, walkStartedAt }, this.views, this.views, this.layout);
  }

  /** One Query of one block's range in its shard of the list of all pets, or of one status. */
  async queryBlock(block: number, from: number, to: number, want: number, status: PetStatus | undefined): Promise<BlockRead> {
    this.queriesSent++;
    const { Items = [] } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: status === undefined ? petIndexes.byListShard : petIndexes.byStatusShard,
          KeyConditionExpression: '#shard = :shard AND id BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#shard': status === undefined ? 'listShard' : 'statusShard' },
          ExpressionAttributeValues: { ':shard': shardKey(block, status, this.layout), ':from': from, ':to': to },
          Limit: want,
        }),
      ),
    );
    return { pets: Items.map(toPet), oldestCreatedAt: Math.min(...Items.map((item) => Date.parse(String(item.createdAt)))) };
  }

  readCounterCopy(): Promise<CounterBlocks | undefined> {
    this.frontierReadsSent++;
    return this.blocks.readCopy();
  }

  /**
   * Reserves a block of `count` fresh ids (count must be the layout's block
   * size), above every block handed out before, and returns its first id. Ids
   * of a block that is never used are skipped, never reused.
   */
  async reserveIds(count: number): Promise<number> {
    if (count !== this.layout.blockSize) throw new Error(`Id blocks hold ${this.layout.blockSize} ids, not ${count}`);
    return firstIdOf(await this.blocks.reserve(), this.layout);
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
