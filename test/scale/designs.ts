import { type PetLayout, petLayout } from '../../functions/data/pet-layout';
import { PetRepository } from '../../functions/data/pet-repository';
import { IdAllocator } from '../../functions/domain/id-allocator';
import type { ScaleDesign } from '../support/scale-run';

/**
 * The layout under test. Id blocks are smaller than in service (16 ids, not
 * 200): a simulated instance carries the creates of many real ones, and a real
 * instance fills its block at its own pace while the block's shard takes the
 * blocks of all the others; with whole blocks a few simulated instances would
 * each pour hundreds of creates into one shard. Stripes and shards are as deployed.
 */
export const scaledLayout: PetLayout = { ...petLayout, blockSize: 16 };

function design(name: string, layout: PetLayout): ScaleDesign {
  return {
    name,
    instance: (dependencies, seeding = false) => {
      // The past is seeded round the stripes: in a table long in service every stripe has handed out
      // about as many blocks (they drift apart by about the square root of their count, small beside it).
      let next = 0;
      const pickStripe = seeding ? (count: number) => next++ % count : undefined;
      const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets, { layout, clock: dependencies.clock, pickStripe });
      const ids = new IdAllocator((count) => pets.reserveIds(count), layout.blockSize, {
        clock: dependencies.clock,
        lifetimeMs: layout.blockLifetimeMs,
      });
      return { pets, ids };
    },
    // An instance trusts its view of which blocks exist for 10 s (pet-repository.ts): a block a lagging stripe hands out below
    // the newest ones shows after that; 1 s more for a loaded machine.
    stalenessMs: 11_000,
  };
}

/** Today's design: lists sharded by id block over 256 keys per index, ids from 16 allocator stripes. */
export const shardedDesign = design(
  `lists sharded over ${scaledLayout.shardCount} keys per index, ids from ${scaledLayout.stripeCount} stripes, blocks of ${scaledLayout.blockSize}`,
  scaledLayout,
);

/** The fixture that must fail: every pet under one list key (one shard), as before sharding. */
export const singleListKeyDesign = design('one list key per index (a single shard), ids from 16 stripes', {
  ...scaledLayout,
  shardCount: 1,
});
