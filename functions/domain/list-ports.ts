import type { CounterBlocks } from './id-blocks';
import type { Pet, PetStatus } from './pet';

/*
 * The ports of the list use case (functions/domain/pet-list.ts): what its views
 * read from storage. functions/data/ implements them and imports nothing else of
 * the list path (a lint rule says so: biome.json).
 */

/** What the views read of the pets (functions/data/pet-repository.ts implements it). */
export interface BlockQueries {
  /** One read of `block`'s pets with ids from … to, ascending, at most `want`, and when the oldest of them was created (ms; Infinity if none). */
  queryBlock(block: number, from: number, to: number, want: number, status: PetStatus | undefined): Promise<BlockRead>;
}

/** Which blocks exist (functions/data/block-counter.ts implements it). */
export interface CounterCopies {
  /** The block counter's value from one of its copies, or undefined before its first block. */
  readCounterCopy(): Promise<CounterBlocks | undefined>;
}

export interface BlockRead {
  pets: Pet[];
  oldestCreatedAt: number;
}
