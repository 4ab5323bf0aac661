import { PetRepository } from '../../functions/data/pet-repository';
import { IdAllocator } from '../../functions/domain/id-allocator';
import type { ScaleDesign } from '../support/scale-run';

/** The pet store as deployed: one allocator item, one byList key, one byStatus key per status. */
export const currentDesign: ScaleDesign = {
  name: 'one byList key ("pets"), one allocator item',
  instance: (dependencies) => {
    const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
    return { pets, ids: new IdAllocator((count) => pets.reserveIds(count)) };
  },
  stalenessMs: 0,
};
