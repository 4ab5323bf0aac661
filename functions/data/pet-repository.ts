import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { functionTimeoutSeconds } from '../../definitions/routes';
import { petIndexes } from '../../definitions/tables';
import { DependencyUnavailableError } from '../domain/errors';
import type { Pet, PetStatus } from '../domain/pet';
import type { PetPage, PetStore } from '../domain/pets';
import { BlockCounter } from './block-counter';
import { conditionalPut } from './conditional-check';
import { dynamoCall } from './dynamo-errors';
import {
  blockOf,
  type EarlyBlocks,
  type Frontier,
  firstIdOf,
  lastIdOf,
  nextAllocated,
  type PetLayout,
  petLayout,
  sealedAfterMs,
  shardKey,
} from './pet-layout';

/** The most Queries one page sends at once (bounded fan-out over the next blocks). */
const MAX_PARALLEL_QUERIES = 4;
/**
 * The most blocks one page reads: a filter few pets match would otherwise read
 * every block of the list for one page (a Query each). A page that reaches this
 * bound answers the pets it found, maybe none, and its next page starts after
 * the last block it read (docs/clients.md: a page may hold fewer than `limit`).
 */
export const MAX_BLOCKS_PER_PAGE = 32;
/**
 * How long an instance keeps a view of the newest pets: which blocks exist, and
 * ranges of blocks still being filled. Such a view serves only pages of walks
 * that began at most VIEW_LEAD_MS after it was read; a walk that began later
 * reads afresh. A page of an older walk shows a pet created since within this.
 */
const RECENT_VIEW_MAX_AGE_MS = 10_000;
/**
 * A view read this long before a walk began still serves it. A pet whose create
 * answered a second before the walk began was stored, and its block published
 * (functions/data/block-counter.ts), before the view was read: of the second,
 * this much is the view's lead, the rest a margin for the clocks of the
 * instances and for the pet reaching the eventually consistent index. So an
 * instance reads which blocks exist (and each newest block) at most once per
 * VIEW_LEAD_MS, however many walks begin on it (SCALING.md).
 */
const VIEW_LEAD_MS = 500;
/** Views of the newest pets read this close together join (one is at most this much older than the other). */
const JOIN_WINDOW_MS = 1_000;
/**
 * How long an instance keeps which early blocks exist (those handed out before
 * the block counter; migration until 2027-06-30: nothing reserves them once every instance runs the
 * counter, and then this could be forever). While an older version still
 * reserves on the stripes, a pet it creates shows in walks within this.
 */
const EARLY_BLOCKS_MAX_AGE_MS = 60_000;
/** Block ranges an instance keeps, the least recently used dropped first (about 200 bytes a pet: a few MB at most). */
const SEALED_CACHE_ENTRIES = 512;
/** How long a sealed range is kept: bounds how late a pet written into an old block (a create retried hours later with its Idempotency-Key) can appear. */
const SEALED_CACHE_TTL_MS = 60_000;

/** When a view was read: `at` on the instance's monotonic clock (for its age), `clockAt` on the service's clock (to compare with a walk's start). */
interface ReadTime {
  at: number;
  clockAt: number;
}

interface CachedRange extends ReadTime {
  /** Every pet of the view with an id in from … to, ascending. */
  from: number;
  to: number;
  pets: Pet[];
  sealed: boolean;
}

export interface PetRepositoryOptions {
  layout?: PetLayout;
  /** The service's clock: createdAt and block lifetimes are on it, so sealing is judged on it. */
  clock?: () => number;
  /** Real elapsed time, for how long caches are trusted (a test clock may stand still). */
  cacheClock?: () => number;
  /** How many block ranges the instance keeps (SEALED_CACHE_ENTRIES by default). */
  rangeCacheEntries?: number;
  /** Which copy of the block counter a read goes to; at random by default. */
  pickCopy?: (copies: number) => number;
}

/** Reads and writes pets. The only module that knows how pets are stored (the layout: functions/data/pet-layout.ts). */
export class PetRepository implements PetStore {
  readonly layout: PetLayout;
  private readonly clock: () => number;
  private readonly cacheClock: () => number;
  private readonly blocks: BlockCounter;
  private readonly rangeCacheEntries: number;
  private early: (EarlyBlocks & ReadTime) | undefined;
  private frontier: (Frontier & ReadTime) | undefined;
  private frontierRead: Promise<Frontier & ReadTime> | undefined;
  /** Ranges read, per status filter and block: sealed ones for a minute, others as views of the newest pets. */
  private readonly ranges = new Map<string, CachedRange>();
  /** Queries sent by listAfter, and reads of which blocks exist (a copy of the block counter), for the bench and tests. */
  queriesSent = 0;
  frontierReadsSent = 0;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: PetRepositoryOptions = {},
  ) {
    this.layout = options.layout ?? petLayout;
    this.clock = options.clock ?? Date.now;
    // A monotonic clock: cache ages are durations, and a test's clock may stand in for Date.now (local/lambda-runtime-worker.mjs).
    this.cacheClock = options.cacheClock ?? (() => performance.now());
    this.blocks = new BlockCounter(db, tableName, this.layout, options.pickCopy);
    this.rangeCacheEntries = options.rangeCacheEntries ?? SEALED_CACHE_ENTRIES;
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
   * Up to `limit` pets with ids above `afterId`, ascending, and whether more
   * exist. Walks the blocks that exist in id order: the pets of block b are in
   * shard b mod shardCount, so each Query reads one block's range of one shard.
   * Most pages lie in one block (one Query); a page that needs more reads the
   * next blocks at most MAX_PARALLEL_QUERIES at a time, and at most
   * MAX_BLOCKS_PER_PAGE blocks in all. Ranges of sealed blocks are kept for a
   * minute: the first pages, which every walk reads, cost no Query on a warm
   * instance. Views of the newest pets serve pages of walks begun before they
   * were read (`walkStartedAt`, the service's clock; by default none: all read
   * afresh): the last pages of walks under way cost an instance one read of each
   * newest block per RECENT_VIEW_MAX_AGE_MS, however many walks end there.
   */
  async listAfter(
    afterId: number,
    limit: number,
    status: PetStatus | undefined,
    walkStartedAt = Number.POSITIVE_INFINITY,
  ): Promise<PetPage> {
    const want = limit + 1;
    const found: Pet[] = [];
    let after = afterId;
    // The block of the next id is read at once, beside the view of which blocks exist (needed only for what follows).
    const known = this.frontier && this.cacheClock() - this.frontier.at < RECENT_VIEW_MAX_AGE_MS ? this.frontier : undefined;
    const frontierRead = known ? Promise.resolve(known) : this.currentFrontier();
    let frontier = known as Frontier & ReadTime;
    let blocks = [blockOf(after + 1, this.layout)];
    let batch = 1;
    let blocksRead = 0;
    for (;;) {
      const [results, read] = await Promise.all([
        Promise.all(blocks.map((b) => this.readBlock(b, after, want - found.length, status, walkStartedAt))),
        frontier ?? frontierRead,
      ]);
      frontier = read;
      blocksRead += blocks.length;
      for (const pets of results) {
        for (const pet of pets) if (found.length < want && pet.id > after) found.push(pet);
      }
      if (found.length >= want) break;
      // These blocks are read to their end: what follows starts after the last of them.
      after = Math.max(after, found.at(-1)?.id ?? 0, lastIdOf(blocks.at(-1) as number, this.layout));
      // The next block alone first (a block holds up to blockSize pets: it usually ends the page),
      // then twice as many at a time while blocks come up short (a filter few pets match).
      batch = Math.max(1, Math.min(MAX_PARALLEL_QUERIES, blocksRead === 1 ? 1 : batch * 2, MAX_BLOCKS_PER_PAGE - blocksRead));
      blocks = this.nextBlocks(after, batch, frontier);
      if (blocks.length === 0 && !this.servesWalk(frontier, walkStartedAt)) {
        // Past the newest block this instance knows of, on a view older than the walk: look again. While
        // DynamoDB throttles (or fails) that read, the view in hand will do if it is recent: a new block shows
        // within RECENT_VIEW_MAX_AGE_MS, as docs/clients.md allows, rather than the page failing.
        const view = frontier;
        frontier = await this.currentFrontier().catch((error: unknown) => {
          if (error instanceof DependencyUnavailableError && this.cacheClock() - view.at < RECENT_VIEW_MAX_AGE_MS) return view;
          throw error;
        });
        blocks = this.nextBlocks(after, batch, frontier);
      }
      if (blocks.length === 0) break;
      // More blocks follow, but this page has read its share: the next page goes on after them.
      if (blocksRead >= MAX_BLOCKS_PER_PAGE) return { pets: found, nextAfterId: after };
    }
    // The next page starts just below the pet that follows this one (read to know more exist): no pet
    // lies between, so it goes straight to that pet's block instead of re-reading the rest of this one.
    const next = found[limit];
    return next ? { pets: found.slice(0, limit), nextAfterId: next.id - 1 } : { pets: found };
  }

  /** Up to `count` blocks that exist, in order, holding ids above `afterId`. */
  private nextBlocks(afterId: number, count: number, frontier: Frontier): number[] {
    const blocks: number[] = [];
    let from = blockOf(afterId + 1, this.layout);
    while (blocks.length < count) {
      const next = nextAllocated(from, frontier, this.layout);
      if (next === undefined) break;
      blocks.push(next);
      from = next + 1;
    }
    return blocks;
  }

  /**
   * Whether a view of the newest pets serves a page of a walk: read since the
   * walk began (with a margin), so it holds every pet the walk must see, not
   * ahead of the service's clock (a clock set back), and recent.
   */
  private servesWalk(view: ReadTime, walkStartedAt: number): boolean {
    return (
      view.clockAt >= walkStartedAt - VIEW_LEAD_MS && view.clockAt <= this.clock() && this.cacheClock() - view.at < RECENT_VIEW_MAX_AGE_MS
    );
  }

  /** Whether a range kept is still good to use: sealed ranges for a minute, others as views of the newest pets. */
  private rangeServes(range: CachedRange, walkStartedAt: number): boolean {
    return range.sealed ? this.cacheClock() - range.at < SEALED_CACHE_TTL_MS : this.servesWalk(range, walkStartedAt);
  }

  /** Pets of one block with ids above `afterId`, at most `want` (all of them when a kept range is at hand). */
  private async readBlock(
    block: number,
    afterId: number,
    want: number,
    status: PetStatus | undefined,
    walkStartedAt: number,
  ): Promise<Pet[]> {
    const from = Math.max(afterId + 1, firstIdOf(block, this.layout));
    const to = lastIdOf(block, this.layout);
    const cacheKey = `${status ?? ''}:${block}`;
    const cached = this.ranges.get(cacheKey);
    if (cached && cached.from <= from && this.rangeServes(cached, walkStartedAt)) {
      const pets = cached.pets.filter((pet) => pet.id >= from);
      // The cached range covers the rest of the block, or at least `want` pets of it.
      if (cached.to === to || pets.length >= want) {
        // Least recently used goes first: a hit keeps its range (the first pages every walk reads outlive a rare filter's many blocks).
        this.ranges.delete(cacheKey);
        this.ranges.set(cacheKey, cached);
        return pets.slice(0, want);
      }
    }
    this.queriesSent++;
    const readAt = this.readTime();
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
    const pets = Items.map(toPet);
    this.remember(cacheKey, from, Items.length < want ? to : Number(Items.at(-1)?.id), pets, Items, readAt);
    return pets;
  }

  /**
   * Keeps a range read: a minute when its block is sealed (no pet can be
   * written into it any more: pet-layout.ts), else as a view of the newest pets
   * (RECENT_VIEW_MAX_AGE_MS). A range that touches the one kept for its block,
   * while that one is still good, joins it, so that pages of one block read at
   * different places are all served (kept apart, each read would push the other
   * out). The joined range is as old as its older part, so views of the newest
   * pets join only when read within JOIN_WINDOW_MS of each other; otherwise
   * the newer read replaces the older.
   */
  private remember(cacheKey: string, from: number, to: number, pets: Pet[], items: Record<string, unknown>[], readAt: ReadTime): void {
    const oldest = Math.min(...items.map((item) => Date.parse(String(item.createdAt))));
    const sealed = Number.isFinite(oldest) && this.clock() - oldest >= sealedAfterMs(this.layout, functionTimeoutSeconds * 1000);
    let range: CachedRange = { from, to, pets, sealed, ...readAt };
    const kept = this.ranges.get(cacheKey);
    const touches = kept !== undefined && kept.from <= to + 1 && from <= kept.to + 1;
    // Views of the newest pets join only when read close together: the joined view serves the walks the older part serves.
    const joins = touches && ((sealed && kept.sealed) || readAt.clockAt - kept.clockAt <= JOIN_WINDOW_MS);
    if (kept && joins && this.rangeServes(kept, Number.NEGATIVE_INFINITY)) {
      const byId = new Map([...kept.pets, ...pets].map((pet) => [pet.id, pet]));
      range = {
        from: Math.min(from, kept.from),
        to: Math.max(to, kept.to),
        pets: [...byId.values()].sort((a, b) => a.id - b.id),
        sealed: sealed && kept.sealed,
        at: Math.min(kept.at, readAt.at),
        clockAt: Math.min(kept.clockAt, readAt.clockAt),
      };
    }
    this.ranges.delete(cacheKey);
    this.ranges.set(cacheKey, range);
    if (this.ranges.size > this.rangeCacheEntries) this.ranges.delete(this.ranges.keys().next().value as string);
  }

  private readTime(): ReadTime {
    return { at: this.cacheClock(), clockAt: this.clock() };
  }

  /**
   * Which blocks exist: a copy of the block counter (one GetItem) and the early
   * blocks (kept EARLY_BLOCKS_MAX_AGE_MS); reads asked for while one is under way share it.
   */
  private async currentFrontier(): Promise<Frontier & ReadTime> {
    this.frontierRead ??= this.readFrontier().finally(() => {
      this.frontierRead = undefined;
    });
    this.frontier = await this.frontierRead;
    return this.frontier;
  }

  private async readFrontier(): Promise<Frontier & ReadTime> {
    const readAt = this.readTime();
    this.frontierReadsSent++;
    const [early, counter] = await Promise.all([this.earlyBlocks(), this.blocks.readCopy()]);
    return { ...early, counter, ...readAt };
  }

  private async earlyBlocks(): Promise<EarlyBlocks> {
    if (this.early && this.cacheClock() - this.early.at < EARLY_BLOCKS_MAX_AGE_MS) return this.early;
    const readAt = this.readTime();
    this.early = { ...(await this.blocks.readEarlyBlocks()), ...readAt };
    return this.early;
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
