import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { petLayout } from '../../functions/data/pet-layout';
import { PetRepository } from '../../functions/data/pet-repository';
import { IdAllocator } from '../../functions/domain/id-allocator';
import type { PetStatus } from '../../functions/domain/pet';
import { createPet } from '../../functions/domain/pet-creation';
import { listPets } from '../../functions/domain/pets';
import { LEGACY_ID_MARGIN, type MigrationState, migrateListShards } from '../../scripts/migrate-list-shards';
import { createTestTables, testDependencies } from '../support/dynamo';

/**
 * The migration of a table in service, on DynamoDB Local: 1,500 pets as the old
 * code stored them (listKey "pets", no shard keys, the old allocator at id 0), a
 * backfill stopped midway and resumed from its saved state, then lists and
 * creates on the new design: every old pet listed once, in order, and new ids
 * above every old one.
 */
const OLD_PETS = 1_500;
const statuses: PetStatus[] = ['available', 'pending', 'sold'];

it('backfills a populated table in two runs, after which lists see every pet and new ids never collide', async () => {
  const dependencies = testDependencies(await createTestTables());
  const { db, tableNames } = dependencies;
  const table = tableNames.pets;
  for (let first = 1; first <= OLD_PETS; first += 25) {
    const items = Array.from({ length: 25 }, (_, i) => ({
      PutRequest: {
        Item: {
          id: first + i,
          listKey: 'pets',
          name: `Old ${first + i}`,
          categoryId: 1,
          status: statuses[(first + i) % 3],
          createdAt: '2025-06-01T00:00:00.000Z',
        },
      },
    }));
    await db.send(new BatchWriteCommand({ RequestItems: { [table]: items } }));
  }
  await db.send(new PutCommand({ TableName: table, Item: { id: 0, lastReservedId: OLD_PETS + 100 } }));

  let saved: MigrationState = { seeded: false, scanned: 0, updated: 0, done: false };
  const save = (state: MigrationState) => {
    saved = JSON.parse(JSON.stringify(state)) as MigrationState;
  };
  const lines: string[] = [];
  // The first run stops after two pages (a crash, a timeout, Ctrl-C).
  await migrateListShards({ db, table, state: structuredClone(saved), save, pageSize: 400, maxPages: 2, log: (l) => lines.push(l) });
  expect(saved).toMatchObject({ seeded: true, done: false, scanned: 800 });
  await migrateListShards({ db, table, state: structuredClone(saved), save, pageSize: 400, log: (l) => lines.push(l) });
  expect(saved).toMatchObject({ done: true, updated: OLD_PETS });
  expect(lines.at(-1)).toMatch(/backfilled 1,500 pets: done/);

  const reader = new PetRepository(db, table);
  const walk = async (status?: PetStatus) => {
    const ids: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await listPets({ limit: 100, status, cursor }, { pets: reader, clock: dependencies.clock });
      ids.push(...page.pets.map((pet) => pet.id));
      cursor = page.nextCursor;
    } while (cursor);
    return ids;
  };
  expect(await walk()).toEqual(Array.from({ length: OLD_PETS }, (_, i) => i + 1));
  expect(await walk('sold')).toEqual(Array.from({ length: OLD_PETS }, (_, i) => i + 1).filter((id) => id % 3 === 2));

  // New creates: ids above the old allocator and its margin; lists show them after the old pets.
  const writer = new PetRepository(db, table);
  const ids = new IdAllocator((count) => writer.reserveIds(count), petLayout.blockSize);
  const fresh = await createPet({ name: 'New', categoryId: 1 }, { pets: writer, ids, clock: dependencies.clock });
  expect(fresh.id).toBeGreaterThan(OLD_PETS + 100 + LEGACY_ID_MARGIN);
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  expect((await walk()).at(-1)).toBe(fresh.id);
}, 120_000);
