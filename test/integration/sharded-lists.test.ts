import { type PetLayout, petLayout, shardAttributes } from '../../functions/data/pet-layout';
import { PetRepository } from '../../functions/data/pet-repository';
import { ApiError, DependencyUnavailableError } from '../../functions/domain/errors';
import type { Pet, PetStatus } from '../../functions/domain/pet';
import { createPet } from '../../functions/domain/pet-creation';
import { MAX_BLOCKS_PER_PAGE } from '../../functions/domain/pet-walk';
import { listPets } from '../../functions/domain/pets';
import { createTestTables, testDependencies, testDocumentClient, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';
import { CountingPetList, idAllocatorOn } from '../support/pet-list';

/**
 * Lists over write-sharded indexes (functions/data/pet-layout.ts), on DynamoDB
 * Local: pets created by several instances, each with its own allocator, are
 * walked page by page through the list use case, whatever the page size and
 * filter: every pet exactly once, ascending. Small blocks and few shards make
 * a few hundred pets cross many blocks and shards.
 */
const layout: PetLayout = { ...petLayout, blockSize: 10, shardCount: 8 };
const statuses: PetStatus[] = ['available', 'available', 'pending', 'sold'];
let created: Pet[];
let dependencies: ReturnType<typeof testDependencies>;
let reader: CountingPetList;
/** The reader's real-time clock for its caches, moved by hand. */
const cacheNow = 1_000_000;
/** When the pets were first written: on a service clock set there, every block is still being filled (not sealed). */
let petsWrittenFrom: number;

beforeAll(async () => {
  petsWrittenFrom = Date.now();
  dependencies = testDependencies(await createTestTables());
  const instances = Array.from({ length: 6 }, () => {
    const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets, { layout });
    return { pets, ids: idAllocatorOn(dependencies.db, dependencies.tableNames.pets, layout), clock: dependencies.clock };
  });
  created = [];
  for (let round = 0; round < 25; round++) {
    // Six instances create at once, unevenly: some blocks fill up, some are left part-used.
    const batch = await Promise.all(
      instances.map((instance, i) =>
        i <= round % 6 ? createPet({ name: `Pet ${round}-${i}`, categoryId: 1, status: statuses[(round + i) % 4] }, instance) : undefined,
      ),
    );
    for (const pet of batch) if (pet) created.push(pet);
  }
  reader = new CountingPetList(dependencies.db, dependencies.tableNames.pets, { layout, cacheClock: () => cacheNow });
}, 120_000);
afterAll(() => dependencies.db.destroy());

/** A walk; `startsLaterMs` puts its start that much after the reader's clock (a walk begun later, on another instance). */
async function walk(limit: number, status?: PetStatus, startsLaterMs = 0): Promise<{ ids: number[]; pages: number }> {
  const ids: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  const clock = () => dependencies.clock() + startsLaterMs;
  do {
    const page = await listPets({ limit, status, cursor }, { list: reader, clock });
    ids.push(...page.pets.map((pet) => pet.id));
    // A page may hold fewer than `limit` while more follow: when it read MAX_BLOCKS_PER_PAGE blocks, or reached the end of a
    // block of a dense list (both tested below).
    expect(page.pets.length).toBeLessThanOrEqual(limit);
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

describe.each([1, 7, 20, 100])('a walk with limit %i', (limit) => {
  it.each([undefined, 'available', 'sold'] as const)('sees every pet (status %s) exactly once, ascending', async (status) => {
    const expected = created
      .filter((pet) => status === undefined || pet.status === status)
      .map((pet) => pet.id)
      .sort((a, b) => a - b);
    const { ids } = await walk(limit, status);
    expect(ids).toEqual(expected);
  });
});

it('spreads the pets over the shards of each index: whole blocks per key, no key with half of them', async () => {
  const byShard = new Map<string, number>();
  for (const pet of created) {
    const { listShard } = shardAttributes(pet, layout);
    byShard.set(listShard, (byShard.get(listShard) ?? 0) + 1);
  }
  expect(byShard.size).toBeGreaterThan(4);
  expect(Math.max(...byShard.values())).toBeLessThan(created.length / 2);
});

it('reads a page inside one block with one Query', async () => {
  const { ids } = await walk(100);
  // Two ids of the same block, one apart: the page after the first is within its block.
  const first = ids.find((id, i) => ids[i + 1] === id + 1) as number;
  const before = reader.queriesSent;
  const page = await reader.listAfter(first - 1, 1, undefined);
  expect(page.pets.map((pet) => pet.id)).toEqual([first]);
  expect(reader.queriesSent - before).toBe(1);
  // A block still being filled is not served from the cache to a walk begun now (by default): the same page reads
  // again, so a pet created meanwhile would show.
  await reader.listAfter(first - 1, 1, undefined);
  expect(reader.queriesSent - before).toBe(2);
});

it('refuses a tampered cursor and one made for another filter with 400s', async () => {
  const page = await listPets({ limit: 5 }, { list: reader, clock: dependencies.clock });
  const cursor = page.nextCursor as string;
  await expect(listPets({ limit: 5, cursor: `${cursor.slice(0, -2)}AA` }, { list: reader, clock: dependencies.clock })).rejects.toThrow(
    ApiError,
  );
  await expect(listPets({ limit: 5, status: 'sold', cursor }, { list: reader, clock: dependencies.clock })).rejects.toThrow(
    /another status/,
  );
});

it.each([undefined, 'sold'] as const)(
  'lists pets created by new instances in every walk (status %s) begun a second after their creates answered: new blocks lie above every block',
  async (status) => {
    await walk(100, status);
    const newcomers: Pet[] = [];
    for (let i = 0; i < 4; i++) {
      // Each on an instance of its own, with a block of its own.
      const writer = new PetRepository(dependencies.db, dependencies.tableNames.pets, { layout });
      const context = {
        pets: writer,
        ids: idAllocatorOn(dependencies.db, dependencies.tableNames.pets, layout),
        clock: dependencies.clock,
      };
      newcomers.push(await createPet({ name: `Newcomer ${i}`, categoryId: 1, status: status ?? 'available' }, context));
    }
    created.push(...newcomers);
    const newest = Math.max(...created.filter((pet) => !newcomers.includes(pet)).map((pet) => pet.id));
    expect(Math.min(...newcomers.map((pet) => pet.id))).toBeGreaterThan(newest);
    // The reader's views of the newest pets were read just before the creates: a walk begun a second later reads again.
    const { ids } = await walk(100, status, 1_000);
    for (const pet of newcomers) expect(ids).toContain(pet.id);
  },
);

it('serves the last pages of walks under way from one read of the newest pets; a walk begun after a create reads afresh', async () => {
  // The service's clock stands where the pets were written, so every block is still being filled; both clocks move by hand.
  let clockNow = petsWrittenFrom;
  let monotonic = 0;
  const advance = (ms: number) => {
    clockNow += ms;
    monotonic += ms;
  };
  const pets = new CountingPetList(dependencies.db, dependencies.tableNames.pets, {
    layout,
    clock: () => clockNow,
    cacheClock: () => monotonic,
  });
  const context = { list: pets, clock: () => clockNow };
  const reads = () => pets.queriesSent + pets.frontierReadsSent;
  const begin = async (on = context) => {
    const page = await listPets({ limit: 7 }, on);
    return { ids: page.pets.map((pet) => pet.id), cursor: page.nextCursor };
  };
  /** The rest of a walk, and the reads of DynamoDB it cost. */
  const finish = async (walk: { ids: number[]; cursor?: string }, on = context) => {
    const before = reads();
    let cursor = walk.cursor;
    const ids = [...walk.ids];
    while (cursor) {
      const page = await listPets({ limit: 7, cursor }, on);
      ids.push(...page.pets.map((pet) => pet.id));
      cursor = page.nextCursor;
    }
    return { ids, reads: reads() - before };
  };

  const [a, b, c, e] = [await begin(), await begin(), await begin(), await begin()];
  advance(2_000);
  const walkA = await finish(a);
  expect(walkA.ids).toEqual(created.map((pet) => pet.id).sort((x, y) => x - y));
  expect(walkA.reads).toBeGreaterThan(5);
  // Walk B began with A: the ranges and the view of which blocks exist that A's pages read serve all of it.
  expect(await finish(b)).toEqual({ ids: walkA.ids, reads: 0 });
  advance(600);

  const writer = new PetRepository(dependencies.db, dependencies.tableNames.pets, { layout });
  const newcomer = await createPet(
    { name: 'Created during the walks', categoryId: 1 },
    { pets: writer, ids: idAllocatorOn(dependencies.db, dependencies.tableNames.pets, layout), clock: () => clockNow },
  );
  created.push(newcomer);
  advance(2_000);
  // Walk C began before the create: it may end on those views (a pet created during a walk may or may not appear).
  expect(await finish(c)).toEqual({ ids: walkA.ids, reads: 0 });
  // A walk begun after the create reads afresh, and lists the new pet.
  const d = await begin();
  advance(1_500);
  const walkD = await finish(d);
  expect(walkD.ids).toContain(newcomer.id);
  expect(walkD.reads).toBeGreaterThan(0);
  // Views over 10 s old serve no walk: E, begun before the create, reads afresh too and lists it.
  advance(10_000);
  const walkE = await finish(e);
  expect(walkE.ids).toContain(newcomer.id);
  expect(walkE.reads).toBeGreaterThan(0);
});

it("serves a walk's first and second pages of a sealed block from the cache, however often they alternate", async () => {
  // An hour on: every block is sealed (pet-layout.ts), so its ranges may be kept.
  const later = () => Date.now() + 3_600_000;
  const warm = new CountingPetList(dependencies.db, dependencies.tableNames.pets, { layout, clock: later, cacheClock: () => cacheNow });
  const context = { list: warm, clock: later };
  const firstAndSecond = async () => {
    const first = await listPets({ limit: 3 }, context);
    await listPets({ limit: 3, cursor: first.nextCursor }, context);
  };
  await firstAndSecond();
  const firstRound = warm.queriesSent;
  expect(firstRound).toBeGreaterThan(0);
  for (let i = 0; i < 9; i++) await firstAndSecond();
  // Kept apart, each page's range pushed the other's out: every page read again.
  expect(warm.queriesSent).toBe(firstRound);
});

describe('a dense list', () => {
  // Blocks of 10, filled one after another by one instance: every id used.
  const dense: PetLayout = { ...petLayout, blockSize: 10, shardCount: 8 };
  let deps: ReturnType<typeof testDependencies>;

  beforeAll(async () => {
    const fresh = await tablesOn(dense);
    deps = fresh.deps;
    const { instance } = fresh;
    for (let i = 0; i < 60; i++) await createPet({ name: `Dense ${i}`, categoryId: 1 }, instance);
  }, 120_000);
  afterAll(() => deps.db.destroy());

  it.each([3, 7, 10, 100])(
    'with limit %i, reads one block a page (one Query, or none from the cache) and ends a page at a block’s end at the latest',
    async (limit) => {
      const reader = new CountingPetList(deps.db, deps.tableNames.pets, { layout: dense });
      const context = { list: reader, clock: deps.clock };
      const pages: { ids: number[]; queries: number }[] = [];
      let cursor: string | undefined;
      do {
        const before = reader.queriesSent;
        const page = await listPets({ limit, cursor }, context);
        pages.push({ ids: page.pets.map((pet) => pet.id), queries: reader.queriesSent - before });
        cursor = page.nextCursor;
      } while (cursor);
      expect(pages.flatMap((page) => page.ids)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      for (const page of pages) {
        // A range this walk read already may serve the page (a view read after the walk began).
        expect(page.queries).toBeLessThanOrEqual(1);
        expect(new Set(page.ids.map((id) => Math.ceil(id / dense.blockSize))).size).toBeLessThanOrEqual(1);
      }
    },
  );
});

describe('a filter few pets match', () => {
  // Blocks of 2: 100 available pets fill 50 blocks, then one sold pet.
  const sparse: PetLayout = { ...petLayout, blockSize: 2, shardCount: 8 };
  let pets: CountingPetList;
  let soldId: number;
  let deps: ReturnType<typeof testDependencies>;

  beforeAll(async () => {
    const fresh = await tablesOn(sparse);
    ({ deps, pets } = fresh);
    const { instance } = fresh;
    for (let i = 0; i < 100; i++) await createPet({ name: `Available ${i}`, categoryId: 1 }, instance);
    soldId = (await createPet({ name: 'The one sold', categoryId: 1, status: 'sold' }, instance)).id;
  }, 120_000);

  it('reads at most MAX_BLOCKS_PER_PAGE blocks a page, answers a short page with a next cursor, and the walk finds every match once', async () => {
    const context = { list: pets, clock: dependencies.clock };
    const pages: { ids: number[]; queries: number; next: boolean }[] = [];
    let cursor: string | undefined;
    do {
      const before = pets.queriesSent;
      const page = await listPets({ limit: 20, status: 'sold', cursor }, context);
      pages.push({ ids: page.pets.map((pet) => pet.id), queries: pets.queriesSent - before, next: page.nextCursor !== undefined });
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages[0]).toEqual({ ids: [], queries: MAX_BLOCKS_PER_PAGE, next: true });
    expect(pages.flatMap((page) => page.ids)).toEqual([soldId]);
    expect(Math.max(...pages.map((page) => page.queries))).toBeLessThanOrEqual(MAX_BLOCKS_PER_PAGE);
  });

  it('keeps the range a first page reads while walks of rare filters read many blocks: the least recently used range goes first', async () => {
    // An hour on (every block sealed), a cache of 64 ranges; each rare filter's walk reads 51 blocks.
    const later = () => Date.now() + 3_600_000;
    const warm = new CountingPetList(deps.db, deps.tableNames.pets, {
      layout: sparse,
      clock: later,
      cacheClock: () => 0,
      rangeCacheEntries: 64,
    });
    const context = { list: warm, clock: later };
    const walkOf = async (status: PetStatus) => {
      let cursor: string | undefined;
      do cursor = (await listPets({ limit: 20, status, cursor }, context)).nextCursor;
      while (cursor);
    };
    const firstPageQueries = async () => {
      const before = warm.queriesSent;
      await listPets({ limit: 1 }, context);
      return warm.queriesSent - before;
    };
    expect(await firstPageQueries()).toBe(1);
    await walkOf('sold');
    expect(await firstPageQueries()).toBe(0);
    // 51 more ranges: over the 64 kept, the oldest go; the first page's, used a moment ago, stays.
    await walkOf('pending');
    expect(await firstPageQueries()).toBe(0);
  });
});

it('starts the next page at the pet that follows, not in what is left of a part-used block', async () => {
  const ids = created.map((pet) => pet.id).sort((a, b) => a - b);
  // The last pet of a block its instance left part-used: the block's other ids never hold a pet.
  const last = ids.find((id, i) => i + 1 < ids.length && id % layout.blockSize !== 0 && (ids[i + 1] as number) > id + 1) as number;
  const next = ids[ids.indexOf(last) + 1] as number;
  const page = await reader.listAfter(last - 1, 1, undefined);
  expect(page).toEqual({ pets: [expect.objectContaining({ id: last })], nextAfterId: next - 1 });
  const queriesOf = async (afterId: number) => {
    const before = reader.queriesSent;
    const { pets } = await reader.listAfter(afterId, 1, undefined);
    expect(pets.map((pet) => pet.id)).toEqual([next]);
    return reader.queriesSent - before;
  };
  // Started right after the last pet, the page would first read the rest of its block: one Query for nothing.
  expect((await queriesOf(last)) - (await queriesOf(page.nextAfterId as number))).toBe(1);
});

it('ends a page at the newest pets on its recent view of which blocks exist while DynamoDB throttles that read, and fails once the view is too old', async () => {
  const proxy = await DynamoDbFaultProxy.start(testEndpoint());
  const db = testDocumentClient(proxy.endpoint);
  let now = 5_000_000;
  const pets = new CountingPetList(db, dependencies.tableNames.pets, { layout, cacheClock: () => now });
  // Walks begin as time passes on the cache's clock: each a while after the views its instance read.
  const context = { list: pets, clock: () => dependencies.clock() + (now - 5_000_000) };
  const walkAll = async () => {
    const ids: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await listPets({ limit: 100, cursor }, context);
      ids.push(...page.pets.map((pet) => pet.id));
      cursor = page.nextCursor;
    } while (cursor);
    return ids;
  };
  try {
    const expected = await walkAll();
    // Every read of the block counter's copies is refused as DynamoDB refuses a hot key (each of the SDK's attempts).
    proxy.inject({ kind: 'throughput', operation: 'GetItem', times: 1_000 });
    now += 5_000;
    expect(await walkAll()).toEqual(expected);
    expect(proxy.calls.filter((call) => call.fault === 'throughput').length).toBeGreaterThan(0);
    // A view over 10 s old no longer bounds how late a new block shows: the page fails (503), as before.
    now += 10_000;
    await expect(walkAll()).rejects.toThrow(DependencyUnavailableError);
  } finally {
    db.destroy();
    await proxy.close();
  }
});

/** Fresh tables, a list reader on `layout`, and one instance (its own id allocator) to create pets through. */
async function tablesOn(layout: PetLayout) {
  const deps = testDependencies(await createTestTables());
  const pets = new CountingPetList(deps.db, deps.tableNames.pets, { layout });
  const writer = new PetRepository(deps.db, deps.tableNames.pets, { layout });
  const instance = { pets: writer, ids: idAllocatorOn(deps.db, deps.tableNames.pets, layout), clock: deps.clock };
  return { deps, pets, instance };
}
