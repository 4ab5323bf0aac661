import { BlockCounter } from '../../functions/data/block-counter';
import { type PetLayout, petLayout } from '../../functions/data/pet-layout';
import { PetRepository } from '../../functions/data/pet-repository';
import { PetList } from '../../functions/domain/pet-list';
import { idAllocatorOn } from '../support/pet-list';
import type { ScaleDesign } from '../support/scale-run';

/**
 * The layout under test. Id blocks are smaller than in service (16 ids, not
 * 200): a simulated instance carries the creates of many real ones, and a real
 * instance fills its block at its own pace while the block's shard takes the
 * blocks of all the others; with whole blocks a few simulated instances would
 * each pour hundreds of creates into one shard. Shards are as deployed.
 */
export const scaledLayout: PetLayout = { ...petLayout, blockSize: 16 };

function design(name: string, layout: PetLayout): ScaleDesign {
  return {
    name,
    layout,
    instance: (dependencies, ofRun) => {
      const { db, tableNames, clock } = dependencies;
      const pets = new PetRepository(db, tableNames.pets, { layout: ofRun });
      const ids = idAllocatorOn(db, tableNames.pets, ofRun, { clock, lifetimeMs: ofRun.blockLifetimeMs });
      const list = new PetList(pets, new BlockCounter(db, tableNames.pets, ofRun), { layout: ofRun, clock });
      return { pets, list, ids };
    },
    // docs/clients.md: a pet is in every walk begun a second after its create answered.
    stalenessMs: 1_000,
  };
}

/** Today's design: lists sharded by id block over 256 keys per index, ids from one block counter. */
export const shardedDesign = design(
  `lists sharded over ${scaledLayout.shardCount} keys per index, ids from one block counter, blocks of ${scaledLayout.blockSize}`,
  scaledLayout,
);

/** The fixture that must fail: every pet under one list key (one shard), as before sharding. */
export const singleListKeyDesign = design('one list key per index (a single shard), ids from one block counter', {
  ...scaledLayout,
  shardCount: 1,
});
