import { functionTimeoutSeconds } from '../../definitions/routes';
import { DependencyUnavailableError } from './errors';
import { type Frontier, firstIdOf, lastIdOf, type PetLayout, sealedAfterMs } from './id-blocks';
import type { BlockQueries, BlockRead, CounterCopies } from './list-ports';
import type { Pet, PetStatus } from './pet';
import type { BlockSource, FrontierSource } from './pet-walk';

/**
 * How long an instance keeps a view of the newest pets: which blocks exist, and
 * ranges of blocks still being filled. Such a view serves only pages of walks
 * that began before it was read (it holds every pet whose create answered
 * before the walk began: the create wrote its block to the counter's copies
 * before answering, functions/data/block-counter.ts); a walk that began later
 * reads afresh. A page of an older walk shows a pet created since within this.
 */
export const RECENT_VIEW_MAX_AGE_MS = 10_000;
/** Views of the newest pets read this close together join (one is at most this much older than the other). */
const JOIN_WINDOW_MS = 1_000;
/** Block ranges an instance keeps, the least recently used dropped first (about 200 bytes a pet: a few MB at most). */
export const RANGE_CACHE_ENTRIES = 512;
/** How long a sealed range is kept: bounds how late a pet written into an old block (a create retried hours later with its Idempotency-Key) can appear. */
const SEALED_RANGE_TTL_MS = 60_000;

/** When something was read: `at` on the instance's monotonic clock (for its age), `clockAt` on the service's clock (to compare with a walk's start). */
export interface ReadTime {
  at: number;
  clockAt: number;
}

/** A view of which blocks exist. */
export type BlocksView = Frontier & ReadTime;
/** A range of one block's pets as read: every pet with an id in from … to, ascending; sealed when no pet can be added to it. */
export interface BlockRangeView extends ReadTime {
  from: number;
  to: number;
  pets: Pet[];
  sealed: boolean;
}

export interface ListViewsOptions {
  layout: PetLayout;
  /** The service's clock: createdAt and block lifetimes are on it, so sealing is judged on it. */
  clock: () => number;
  /** Real elapsed time, for how long views are trusted (a test clock may stand still). */
  cacheClock: () => number;
  /** How many block ranges the instance keeps (RANGE_CACHE_ENTRIES by default). */
  rangeCacheEntries?: number;
}

/**
 * One instance's views of the lists: ranges of blocks it read (sealed ones for
 * a minute, others as views of the newest pets), and which blocks exist. The
 * walk's two ports (functions/domain/pet-walk.ts), over the items storage reads.
 */
export class ListViews implements BlockSource, FrontierSource {
  private frontier: BlocksView | undefined;
  private frontierRead: Promise<BlocksView> | undefined;
  /** Ranges read, per status filter and block, the least recently used first. */
  private readonly ranges = new Map<string, BlockRangeView>();
  /**
   * The highest block of the block counter a read proved sealed (a pet of it old
   * enough), and from when on (service clock). The counter hands blocks out in
   * order, so every counter block below it was sealed by then too, with or
   * without a pet to show it: the empty ranges of a filter few pets match are
   * kept as sealed, not read again by every new walk.
   */
  private sealedCounter: SealedCounterBlock = { block: Number.NEGATIVE_INFINITY, since: Number.POSITIVE_INFINITY };

  constructor(
    private readonly pets: BlockQueries,
    private readonly counter: CounterCopies,
    private readonly options: ListViewsOptions,
  ) {}

  atHand(): Frontier | Promise<Frontier> {
    const known = this.frontier;
    return known && this.age(known) < RECENT_VIEW_MAX_AGE_MS ? known : this.currentFrontier();
  }

  /**
   * The view in hand if it serves the walk, else a fresh one. While DynamoDB
   * throttles (or fails) that read, the view in hand will do if it is recent: a
   * new block shows within RECENT_VIEW_MAX_AGE_MS, as docs/clients.md allows,
   * rather than the page failing.
   */
  async forWalk(walkStartedAt: number, inHand: Frontier): Promise<Frontier> {
    const view = inHand as BlocksView;
    if (this.servesWalk(view, walkStartedAt)) return view;
    return this.currentFrontier().catch((error: unknown) => {
      if (error instanceof DependencyUnavailableError && this.age(view) < RECENT_VIEW_MAX_AGE_MS) return view;
      throw error;
    });
  }

  async readBlock(block: number, afterId: number, want: number, status: PetStatus | undefined, walkStartedAt: number): Promise<Pet[]> {
    const { layout } = this.options;
    const from = Math.max(afterId + 1, firstIdOf(block, layout));
    const to = lastIdOf(block, layout);
    const key = `${status ?? ''}:${block}`;
    const kept = this.keptRange(key, block, from, to, want, walkStartedAt);
    if (kept) return kept;
    const readAt = this.readTime();
    const read = await this.pets.queryBlock(block, from, to, want, status);
    const end = read.pets.length < want ? to : (read.pets.at(-1)?.id as number);
    this.remember(key, this.rangeOf(block, from, end, read, readAt));
    return read.pets;
  }

  /** The pets from `from` on of a kept range that still serves the walk and covers the rest of the block, or `want` pets of it. */
  private keptRange(key: string, block: number, from: number, to: number, want: number, walkStartedAt: number): Pet[] | undefined {
    const cached = this.ranges.get(key);
    if (cached && !cached.sealed && this.sealedByLaterBlock(block, cached.clockAt)) cached.sealed = true;
    if (!cached || cached.from > from || !this.rangeServes(cached, walkStartedAt)) return undefined;
    const pets = cached.pets.filter((pet) => pet.id >= from);
    if (cached.to !== to && pets.length < want) return undefined;
    // Least recently used goes first: a hit keeps its range (the first pages every walk reads outlive a rare filter's many blocks).
    this.ranges.delete(key);
    this.ranges.set(key, cached);
    return pets.slice(0, want);
  }

  private rangeOf(block: number, from: number, to: number, read: BlockRead, readAt: ReadTime): BlockRangeView {
    const { clock, layout } = this.options;
    const sealedAt = read.oldestCreatedAt + sealedAfterMs(layout, functionTimeoutSeconds * 1000);
    const oldEnough = Number.isFinite(read.oldestCreatedAt) && clock() >= sealedAt;
    if (oldEnough && block > this.sealedCounter.block) this.sealedCounter = { block, since: sealedAt };
    return { from, to, pets: read.pets, sealed: oldEnough || this.sealedByLaterBlock(block, readAt.clockAt), ...readAt };
  }

  /** Whether a read of `block` at `readAt` (service clock) saw it sealed: a counter block at or below one proved sealed by then. */
  private sealedByLaterBlock(block: number, readAt: number): boolean {
    return block <= this.sealedCounter.block && readAt >= this.sealedCounter.since;
  }

  /**
   * Keeps a range read: a minute when its block is sealed (no pet can be
   * written into it any more: id-blocks.ts), else as a view of the newest pets
   * (RECENT_VIEW_MAX_AGE_MS). A range that touches the one kept for its block,
   * while that one is still good, joins it, so that pages of one block read at
   * different places are all served (kept apart, each read would push the other
   * out). The joined range is as old as its older part, so views of the newest
   * pets join only when read within JOIN_WINDOW_MS of each other; otherwise the
   * newer read replaces the older.
   */
  private remember(key: string, range: BlockRangeView): void {
    const kept = this.ranges.get(key);
    const touches = kept !== undefined && kept.from <= range.to + 1 && range.from <= kept.to + 1;
    const joins = touches && ((range.sealed && kept.sealed) || range.clockAt - kept.clockAt <= JOIN_WINDOW_MS);
    const joined = kept && joins && this.rangeServes(kept, Number.NEGATIVE_INFINITY) ? joinRanges(kept, range) : range;
    this.ranges.delete(key);
    this.ranges.set(key, joined);
    if (this.ranges.size > (this.options.rangeCacheEntries ?? RANGE_CACHE_ENTRIES)) {
      this.ranges.delete(this.ranges.keys().next().value as string);
    }
  }

  /**
   * Whether a view of the newest pets serves a page of a walk: read after the
   * walk began, so it holds every pet the walk must see, not ahead of the
   * service's clock (a clock set back), and recent.
   */
  private servesWalk(view: ReadTime, walkStartedAt: number): boolean {
    return view.clockAt > walkStartedAt && view.clockAt <= this.options.clock() && this.age(view) < RECENT_VIEW_MAX_AGE_MS;
  }

  /** Whether a range kept is still good to use: sealed ranges for a minute, others as views of the newest pets. */
  private rangeServes(range: BlockRangeView, walkStartedAt: number): boolean {
    return range.sealed ? this.age(range) < SEALED_RANGE_TTL_MS : this.servesWalk(range, walkStartedAt);
  }

  /** Which blocks exist, read afresh; reads asked for while one is under way share it. */
  private async currentFrontier(): Promise<BlocksView> {
    this.frontierRead ??= this.readFrontier().finally(() => {
      this.frontierRead = undefined;
    });
    this.frontier = await this.frontierRead;
    return this.frontier;
  }

  private async readFrontier(): Promise<BlocksView> {
    const readAt = this.readTime();
    return { counter: await this.counter.readCounterCopy(), ...readAt };
  }

  private readTime(): ReadTime {
    return { at: this.options.cacheClock(), clockAt: this.options.clock() };
  }

  private age(view: ReadTime): number {
    return this.options.cacheClock() - view.at;
  }
}

/** A block of the block counter known sealed, and since when (ms, the service's clock). */
interface SealedCounterBlock {
  block: number;
  since: number;
}

/** Two ranges of one block as one: every pet of both, as old as the older. */
function joinRanges(kept: BlockRangeView, range: BlockRangeView): BlockRangeView {
  const byId = new Map([...kept.pets, ...range.pets].map((pet) => [pet.id, pet]));
  return {
    from: Math.min(range.from, kept.from),
    to: Math.max(range.to, kept.to),
    pets: [...byId.values()].sort((a, b) => a.id - b.id),
    sealed: range.sealed && kept.sealed,
    at: Math.min(kept.at, range.at),
    clockAt: Math.min(kept.clockAt, range.clockAt),
  };
}
