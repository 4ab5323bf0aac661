import { blockOf, type Frontier, lastIdOf, nextAllocated, type PetLayout } from './id-blocks';
import type { Pet, PetStatus } from './pet';
import type { PetPage } from './pets';

/** The most Queries one page sends at once (bounded fan-out over the next blocks). */
export const MAX_PARALLEL_QUERIES = 4;
/**
 * The most blocks one page reads: a filter few pets match would otherwise read
 * every block of the list for one page (a Query each). A page that reaches this
 * bound answers the pets it found, maybe none, and its next page starts after
 * the last block it read (docs/clients.md: a page may hold fewer than `limit`).
 */
export const MAX_BLOCKS_PER_PAGE = 32;
/**
 * A page that has read its blocks to their end stops there, with a `next`
 * link, once at least this share of the ids it read through are its pets (a
 * dense list). Reading on would cost another Query for the few pets it still
 * lacks, and on a dense list every page after it would cross a block's end too
 * (two Queries, their read units rounded up apart: 3 for a page of 100 against
 * 2.5). So a page of a dense list reads one block, one Query of at most
 * limit + 1 pets, whatever the limit, and ends where a block ends at the
 * latest; a sparse one (a filter few pets match, a block left part-used) reads
 * on for a fuller page (SCALING.md, "The design").
 */
export const DENSE_SHARE = 0.5;

/** Where a page's pets come from: one block at a time (a port: functions/domain/list-views.ts keeps what it read). */
export interface BlockSource {
  /** Pets of `block` with ids above `afterId`, ascending: at most `want`, or all the rest of the block when at hand. */
  readBlock(block: number, afterId: number, want: number, status: PetStatus | undefined, walkStartedAt: number): Promise<Pet[]>;
}

/** Which blocks exist, as the instance sees them (a port: functions/domain/list-views.ts). */
export interface FrontierSource {
  /** The instance's recent view (good for the blocks below the newest), or a read of it under way. */
  atHand(): Frontier | Promise<Frontier>;
  /** A view that holds every block a walk begun at `walkStartedAt` must see: `inHand` if it does, else read afresh. */
  forWalk(walkStartedAt: number, inHand: Frontier): Promise<Frontier>;
}

export interface WalkQuery {
  afterId: number;
  limit: number;
  status: PetStatus | undefined;
  /** When the walk's first page was asked for (ms, the service's clock). */
  walkStartedAt: number;
}

/**
 * One page of a walk: up to `limit` pets with ids above `afterId`, ascending,
 * and where the next page starts. Walks the blocks that exist in id order:
 * most pages lie in one block (one read); a page that needs more reads the next
 * blocks at most MAX_PARALLEL_QUERIES at a time and MAX_BLOCKS_PER_PAGE in all,
 * and stops at the end of a block once its pets are dense (DENSE_SHARE).
 * Past the newest block of the view in hand, it asks for a view that serves the
 * walk, so a pet whose create answered before the walk began is found.
 */
export async function walkPage(query: WalkQuery, source: BlockSource, frontiers: FrontierSource, layout: PetLayout): Promise<PetPage> {
  const want = query.limit + 1;
  const found: Pet[] = [];
  let after = query.afterId;
  // The block of the next id is read at once, beside the view of which blocks exist (needed only for what follows).
  let frontier: Frontier | Promise<Frontier> = frontiers.atHand();
  let blocks = [blockOf(after + 1, layout)];
  let batch = 1;
  let blocksRead = 0;
  for (;;) {
    const [results, view] = await Promise.all([
      Promise.all(blocks.map((b) => source.readBlock(b, after, want - found.length, query.status, query.walkStartedAt))),
      frontier,
    ]);
    blocksRead += blocks.length;
    for (const pet of results.flat()) if (found.length < want && pet.id > after) found.push(pet);
    if (found.length >= want) break;
    // These blocks are read to their end: what follows starts after the last of them.
    after = Math.max(after, found.at(-1)?.id ?? 0, lastIdOf(blocks.at(-1) as number, layout));
    batch = nextBatchSize(batch, blocksRead);
    frontier = view;
    blocks = nextBlocks(after, batch, view, layout);
    if (blocks.length === 0) {
      frontier = await frontiers.forWalk(query.walkStartedAt, view);
      blocks = nextBlocks(after, batch, frontier, layout);
    }
    if (blocks.length === 0) break;
    // More blocks follow, but this page has read its share, or enough of a dense list: the next page goes on after them.
    if (blocksRead >= MAX_BLOCKS_PER_PAGE || isDense(found.length, after - query.afterId)) return { pets: found, nextAfterId: after };
  }
  return pageOf(found, query.limit);
}

/**
 * How many blocks to read next: the next block alone first (a block holds up to
 * blockSize pets: it usually ends the page), then twice as many at a time while
 * blocks come up short (a filter few pets match), within the page's bounds.
 */
export function nextBatchSize(lastBatch: number, blocksRead: number): number {
  const doubled = blocksRead === 1 ? 1 : lastBatch * 2;
  return Math.max(1, Math.min(MAX_PARALLEL_QUERIES, doubled, MAX_BLOCKS_PER_PAGE - blocksRead));
}

/** Whether `pets` found over `ids` ids (a page's, read to a block's end) make a dense list: DENSE_SHARE of them or more. */
export function isDense(pets: number, ids: number): boolean {
  return pets > 0 && pets >= ids * DENSE_SHARE;
}

/** Up to `count` blocks that exist, in order, holding ids above `afterId`. */
export function nextBlocks(afterId: number, count: number, frontier: Frontier, layout: PetLayout): number[] {
  const blocks: number[] = [];
  let from = blockOf(afterId + 1, layout);
  while (blocks.length < count) {
    const next = nextAllocated(from, frontier);
    if (next === undefined) break;
    blocks.push(next);
    from = next + 1;
  }
  return blocks;
}

/**
 * The page, and, when a pet beyond it was found, where the next page starts:
 * just below that pet (no pet lies between), so the next page goes straight to
 * its block instead of re-reading the rest of this one.
 */
function pageOf(found: Pet[], limit: number): PetPage {
  const next = found[limit];
  return next ? { pets: found.slice(0, limit), nextAfterId: next.id - 1 } : { pets: found };
}
