import { listSharding } from '../../definitions/tables';
import { MAX_ID } from './pet';

/**
 * Id blocks: how ids are handed out and how pets are spread over the list
 * shards (SCALING.md, "The design"; the items that hold them: functions/data/pet-layout.ts).
 *
 * - Ids come in aligned blocks of `blockSize`: block b holds ids
 *   b·blockSize + 1 … (b+1)·blockSize. A function instance takes a whole block
 *   and hands its ids out in order.
 * - Blocks are numbered by one counter item (BLOCK_COUNTER_ID): each
 *   reservation adds one, so a new block is always above every block handed out
 *   before, and a reader that knows the counter's value knows every block that
 *   may hold a pet. One item takes every reservation: about 500 a second at
 *   1000× (100,000 creates a second, 200 ids a block), inside the 1,000 write
 *   units a second of one partition ("Understanding DynamoDB warm throughput in
 *   different scenarios", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html).
 * - Readers read one of `frontierCopies` items at random: the counter itself
 *   and `frontierCopies − 1` copies of its value, written before the block's
 *   first id is handed out, so the reads of every list instance are spread over
 *   that many partitions. Each copy takes one write per reservation, as the
 *   counter; the counter being one of them spares a write per block (8 writes a
 *   block of 200 ids: 0.04 per create, 0.048 on a run of 500 creates that
 *   leaves its third block part-used).
 * - Each list index is write-sharded by block: a pet of block b lives under
 *   shard b mod `shardCount` (`listShard = "<n>"`, `statusShard = "<status>#<n>"`),
 *   so a create writes one of `shardCount` partition-key values per index, and a
 *   reader knows which shard holds the next ids.
 */
export interface PetLayout {
  blockSize: number;
  shardCount: number;
  /**
   * An instance stops handing out ids of a block this long after reserving it
   * (a block is "sealed" once no pet can be written into it any more: see
   * sealedAfterMs), and reserves a fresh one.
   */
  blockLifetimeMs: number;
  /** Items holding the block counter's value that readers read, one at random each time: the counter and its copies. */
  frontierCopies: number;
}

export const petLayout: PetLayout = {
  blockSize: 200,
  shardCount: listSharding.shardCount,
  blockLifetimeMs: 60_000,
  frontierCopies: 8,
};

export const blockOf = (id: number, layout: PetLayout): number => Math.floor((id - 1) / layout.blockSize);
export const firstIdOf = (block: number, layout: PetLayout): number => block * layout.blockSize + 1;
/** The last id of a block; the block that holds 2^53−1 ends there, as ids do (decision 3), so a read never names an id past it. */
export const lastIdOf = (block: number, layout: PetLayout): number => Math.min((block + 1) * layout.blockSize, MAX_ID);
export const shardOf = (block: number, layout: PetLayout): number => block % layout.shardCount;

/**
 * Which blocks exist: the block counter has handed out blocks 0 … `top` (the
 * first reservation on a new table is block 0: ids 1 … blockSize).
 */
export interface Frontier {
  counter?: CounterBlocks;
}

/** The blocks the block counter handed out: 0 … `top`. */
export interface CounterBlocks {
  top: number;
}

/** The first allocated block at or after `block`, or undefined when there is none. */
export function nextAllocated(block: number, frontier: Frontier): number | undefined {
  const top = frontier.counter?.top ?? -1;
  return block <= top ? Math.max(block, 0) : undefined;
}

/**
 * A block holding a pet created at `createdAt` was reserved before it, so no
 * pet lands in it after createdAt + block lifetime + the longest a create can
 * take (its function's timeout) + a margin for clocks: from then on it is sealed.
 */
export const sealedAfterMs = (layout: PetLayout, createTimeoutMs: number): number => layout.blockLifetimeMs + createTimeoutMs + 5_000;
