import { IdempotencyRepository } from '../../functions/data/idempotency-repository';
import { PetRepository } from '../../functions/data/pet-repository';
import { IdAllocator } from '../../functions/domain/id-allocator';
import { PetCreation } from '../../functions/domain/pet-creation';
import { findPet } from '../../functions/domain/pets';
import { createTestTables, testDependencies } from '../support/dynamo';

/** Decision 3 on DynamoDB Local: unique ids under concurrency, across containers, never reused. */
describe('pet ids', () => {
  it('gives 200 concurrent creates, spread over 4 containers, 200 distinct ids, and every pet is readable', async () => {
    const dependencies = testDependencies(await createTestTables());
    const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
    // Each "container" has its own allocator, as each Lambda instance would.
    const containers = Array.from({ length: 4 }, () => new IdAllocator((count) => pets.reserveIds(count), 16));
    const records = new IdempotencyRepository(dependencies.db, dependencies.tableNames.idempotency, dependencies.clock);
    const creations = containers.map(
      (ids) => new PetCreation({ pets, records, ids, clock: dependencies.clock, leaseMs: 10_000, ttlSeconds: 86_400 }),
    );
    const created = await Promise.all(
      Array.from({ length: 200 }, async (_, index) => {
        const creation = creations[index % 4] as PetCreation;
        return (await creation.create({ name: `Pet ${index}`, categoryId: 1 }, { keyId: 'test' })).pet;
      }),
    );
    const ids = created.map((pet) => pet.id);
    expect(new Set(ids).size).toBe(200);
    expect(ids.every((id) => Number.isSafeInteger(id) && id >= 1)).toBe(true);
    const read = await Promise.all(ids.map((id) => findPet(id, { pets, clock: dependencies.clock })));
    expect(read).toEqual(created);
  });

  it('never hands out an id again, even to a new container', async () => {
    const dependencies = testDependencies(await createTestTables());
    const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
    const first = new IdAllocator((count) => pets.reserveIds(count), 10);
    const firstIds = [await first.nextId(), await first.nextId()];
    // The first container dies with 8 unused ids in its block; the next one starts after them.
    const second = new IdAllocator((count) => pets.reserveIds(count), 10);
    const secondId = await second.nextId();
    expect(firstIds).toEqual([1, 2]);
    expect(secondId).toBe(11);
  });

  it('costs one allocator write per block, not per create', async () => {
    const dependencies = testDependencies(await createTestTables());
    const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
    let reservations = 0;
    const allocator = new IdAllocator((count) => {
      reservations++;
      return pets.reserveIds(count);
    }, 100);
    await Promise.all(Array.from({ length: 250 }, () => allocator.nextId()));
    expect(reservations).toBe(3);
  });
});
