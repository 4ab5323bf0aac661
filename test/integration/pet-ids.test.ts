import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BlockCounter } from '../../functions/data/block-counter';
import { IdempotencyRepository } from '../../functions/data/idempotency-repository';
import { BLOCK_COUNTER_ID, blockOf, frontierCopyId, type PetLayout, petLayout } from '../../functions/data/pet-layout';
import { PetRepository } from '../../functions/data/pet-repository';
import { IdAllocator } from '../../functions/domain/id-allocator';
import { PetCreation } from '../../functions/domain/pet-creation';
import { findPet } from '../../functions/domain/pets';
import { createTestTables, testDependencies } from '../support/dynamo';

/** Decision 3 on DynamoDB Local: unique ids under concurrency, across containers, never reused. */
describe('pet ids', () => {
  it('gives 200 concurrent creates, spread over 4 containers, 200 distinct ids, and every pet is readable', async () => {
    const dependencies = testDependencies(await createTestTables());
    const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets, { layout: { ...petLayout, blockSize: 16 } });
    const blocks = new BlockCounter(dependencies.db, dependencies.tableNames.pets, pets.layout);
    // Each "container" has its own allocator, as each Lambda instance would.
    const containers = Array.from({ length: 4 }, () => new IdAllocator((count) => blocks.reserveIds(count), 16));
    const records = new IdempotencyRepository(dependencies.db, dependencies.tableNames.idempotency, dependencies.clock);
    const creations = containers.map(
      (ids) => new PetCreation({ pets, records, ids, clock: dependencies.clock, holdMs: 10_000, ttlSeconds: 86_400 }),
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

  it('never hands out an id again, even to a new container, and each new block lies above every block before', async () => {
    const dependencies = testDependencies(await createTestTables());
    const layout: PetLayout = { ...petLayout, blockSize: 10, frontierCopies: 4 };
    const blocks = new BlockCounter(dependencies.db, dependencies.tableNames.pets, layout);
    const first = new IdAllocator((count) => blocks.reserveIds(count), 10);
    const firstIds = [await first.nextId(), await first.nextId()];
    expect(firstIds[1]).toBe((firstIds[0] as number) + 1);
    // The first container dies with 8 unused ids in its block; every later block lies above it and each other.
    let newest = blockOf(firstIds[0] as number, layout);
    for (let container = 0; container < 40; container++) {
      const id = await new IdAllocator((count) => blocks.reserveIds(count), 10).nextId();
      expect((id - 1) % 10).toBe(0);
      expect(blockOf(id, layout)).toBeGreaterThan(newest);
      newest = blockOf(id, layout);
    }
    // One counter took the 41 reservations, and each of its copies, which readers read, holds the newest block.
    const { Items = [] } = await dependencies.db.send(
      new ScanCommand({
        TableName: dependencies.tableNames.pets,
        FilterExpression: 'id < :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
    const tops = Object.fromEntries(Items.map((item) => [Number(item.id), Number(item.top)]));
    expect(tops).toEqual(Object.fromEntries([BLOCK_COUNTER_ID, ...[0, 1, 2, 3].map(frontierCopyId)].map((id) => [id, newest])));
  });

  it('starts the block counter where a new table starts: the first id is 1', async () => {
    const dependencies = testDependencies(await createTestTables());
    const blocks = new BlockCounter(dependencies.db, dependencies.tableNames.pets, { ...petLayout, blockSize: 10 });
    expect(await new IdAllocator((count) => blocks.reserveIds(count), 10).nextId()).toBe(1);
    expect(await new IdAllocator((count) => blocks.reserveIds(count), 10).nextId()).toBe(11);
  });

  it('gives up a block after its lifetime, so that old blocks are sealed', async () => {
    const dependencies = testDependencies(await createTestTables());
    const blocks = new BlockCounter(dependencies.db, dependencies.tableNames.pets, { ...petLayout, blockSize: 10 });
    let now = 0;
    const allocator = new IdAllocator((count) => blocks.reserveIds(count), 10, { clock: () => now, lifetimeMs: 60_000 });
    const a = await allocator.nextId();
    now += 59_999;
    expect(await allocator.nextId()).toBe(a + 1);
    now += 1;
    const b = await allocator.nextId();
    expect(blockOf(b, { ...petLayout, blockSize: 10 })).not.toBe(blockOf(a, { ...petLayout, blockSize: 10 }));
  });

  it('costs one allocator write per block, not per create', async () => {
    const dependencies = testDependencies(await createTestTables());
    const blocks = new BlockCounter(dependencies.db, dependencies.tableNames.pets, { ...petLayout, blockSize: 100 });
    let reservations = 0;
    const allocator = new IdAllocator((count) => {
      reservations++;
      return blocks.reserveIds(count);
    }, 100);
    await Promise.all(Array.from({ length: 250 }, () => allocator.nextId()));
    expect(reservations).toBe(3);
  });

  it.each([
    // The bench's run: its third block is left part-used.
    [500, 24],
    // Full blocks: the counter and its 7 copies, one UpdateItem each per block of 200.
    [1_000, 40],
  ])(
    'hands out %i ids with %i id UpdateItems, at most one per 20 ids (as deployed: blocks of 200, 8 readable copies)',
    async (count, updates) => {
      const dependencies = testDependencies(await createTestTables());
      let sent = 0;
      const send = dependencies.db.send.bind(dependencies.db);
      dependencies.db.send = ((command: object) => {
        if (command instanceof UpdateCommand) sent++;
        return send(command as UpdateCommand);
      }) as typeof dependencies.db.send;
      const blocks = new BlockCounter(dependencies.db, dependencies.tableNames.pets, petLayout);
      const allocator = new IdAllocator((size) => blocks.reserveIds(size), petLayout.blockSize);
      for (let i = 0; i < count; i++) await allocator.nextId();
      expect(sent).toBe(updates);
      expect(sent / count).toBeLessThanOrEqual(1 / 20);
    },
  );
});
