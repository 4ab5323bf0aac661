import { listSharding } from '../../definitions/tables';
import type { PetStatus } from '../domain/pet';

/**
 * How pets are spread over DynamoDB partitions (SCALING.md, "The design").
 *
 * - Ids come in aligned blocks of `blockSize`: block b holds ids
 *   b·blockSize + 1 … (b+1)·blockSize. A function instance takes a whole block
 *   and hands its ids out in order.
 * - Blocks are reserved on `stripeCount` allocator items (ids −1 … −stripeCount
 *   of the pets table): stripe s hands out blocks s, s + S, s + 2S, … so that no
 *   single item takes every reservation.
 * - Each list index is write-sharded by block: a pet of block b lives under
 *   shard b mod `shardCount` (`listShard = "<n>"`, `statusShard = "<status>#<n>"`),
 *   so a create writes one of `shardCount` partition-key values per index, and a
 *   reader knows which shard holds the next ids.
 */
export interface PetLayout {
  blockSize: number;
  stripeCount: number;
  shardCount: number;
  /**
   * An instance stops handing out ids of a block this long after reserving it
   * (a block is "sealed" once no pet can be written into it any more: see
   * sealedAfterMs), and reserves a fresh one.
   */
  blockLifetimeMs: number;
}

export const petLayout: PetLayout = { blockSize: 200, stripeCount: 16, shardCount: listSharding.shardCount, blockLifetimeMs: 60_000 };

/** The allocator item of a stripe: ids no pet can have (pet ids are ≥ 1). */
export const stripeItemId = (stripe: number): number => -1 - stripe;
/** The item of the allocator before striping (`lastReservedId`): ids up to it are legacy blocks. */
export const LEGACY_ALLOCATOR_ID = 0;

export const blockOf = (id: number, layout: PetLayout): number => Math.floor((id - 1) / layout.blockSize);
export const firstIdOf = (block: number, layout: PetLayout): number => block * layout.blockSize + 1;
export const lastIdOf = (block: number, layout: PetLayout): number => (block + 1) * layout.blockSize;
export const shardOf = (block: number, layout: PetLayout): number => block % layout.shardCount;

/** The partition-key value of a block in the list of all pets, or of pets with one status. */
export function shardKey(block: number, status: PetStatus | undefined, layout: PetLayout): string {
  const shard = String(shardOf(block, layout));
  return status === undefined ? shard : `${status}#${shard}`;
}

/**
 * Which blocks exist: read from the allocator items. Stripe s has handed out
 * its blocks number `base + 1` … `reserved` (block (k − 1)·S + s is its k-th);
 * blocks up to `legacyLastBlock` came from the allocator before striping.
 */
export interface Frontier {
  reserved: number[];
  base: number[];
  legacyLastBlock: number;
}

export function isAllocated(block: number, frontier: Frontier, layout: PetLayout): boolean {
  if (block <= frontier.legacyLastBlock) return true;
  const stripe = block % layout.stripeCount;
  const k = Math.floor(block / layout.stripeCount) + 1;
  return k > (frontier.base[stripe] ?? 0) && k <= (frontier.reserved[stripe] ?? 0);
}

/** The first allocated block at or after `block`, or undefined when there is none. */
export function nextAllocated(block: number, frontier: Frontier, layout: PetLayout): number | undefined {
  if (block <= frontier.legacyLastBlock) return Math.max(block, 0);
  let best: number | undefined;
  const S = layout.stripeCount;
  for (let stripe = 0; stripe < S; stripe++) {
    const reserved = frontier.reserved[stripe] ?? 0;
    const base = frontier.base[stripe] ?? 0;
    // The stripe's k-th block is (k − 1)·S + stripe; the first k whose block is ≥ `block`:
    const k = Math.max(base + 1, Math.ceil((block - stripe) / S) + 1);
    if (k > reserved) continue;
    const candidate = (k - 1) * S + stripe;
    if (best === undefined || candidate < best) best = candidate;
  }
  return best;
}

/**
 * A block holding a pet created at `createdAt` was reserved before it, so no
 * pet lands in it after createdAt + block lifetime + the longest a create can
 * take (its function's timeout) + a margin for clocks: from then on it is sealed.
 */
export const sealedAfterMs = (layout: PetLayout, createTimeoutMs: number): number => layout.blockLifetimeMs + createTimeoutMs + 5_000;
