import fc from 'fast-check';
import { blockOf, type CounterBlocks, type EarlyBlocks, type PetLayout, petLayout } from '../../functions/domain/id-blocks';
import { type BlockRead, type ListItems, ListViews } from '../../functions/domain/list-views';
import type { Pet, PetStatus } from '../../functions/domain/pet';
import { MAX_BLOCKS_PER_PAGE, nextBatchSize, walkPage } from '../../functions/domain/pet-walk';

/**
 * The walk (functions/domain/pet-walk.ts) and the instance's views
 * (functions/domain/list-views.ts) over storage held in memory: no DynamoDB.
 * Blocks of 10 ids; the block counter's value is what the memory says.
 */
const layout: PetLayout = { ...petLayout, blockSize: 10 };

class MemoryItems implements ListItems {
  pets: (Pet & { createdAt: number })[] = [];
  counter: CounterBlocks | undefined;
  queries = 0;
  frontierReads = 0;

  add(id: number, status: PetStatus, createdAt: number): Pet {
    const pet = { id, name: `Pet ${id}`, categoryId: 1, status };
    this.pets.push({ ...pet, createdAt });
    const block = blockOf(id, layout);
    this.counter = { from: 0, top: Math.max(this.counter?.top ?? -1, block) };
    return pet;
  }

  async queryBlock(block: number, from: number, to: number, want: number, status: PetStatus | undefined): Promise<BlockRead> {
    this.queries++;
    const found = this.pets
      .filter(
        (pet) => blockOf(pet.id, layout) === block && pet.id >= from && pet.id <= to && (status === undefined || pet.status === status),
      )
      .sort((a, b) => a.id - b.id)
      .slice(0, want);
    return {
      pets: found.map(({ createdAt: _, ...pet }) => pet),
      oldestCreatedAt: Math.min(...found.map((pet) => pet.createdAt)),
    };
  }

  async readCounterCopy(): Promise<CounterBlocks | undefined> {
    this.frontierReads++;
    return this.counter && { ...this.counter };
  }

  async readEarlyBlocks(): Promise<EarlyBlocks> {
    return { legacyLastBlock: -1, stripeRanges: [] };
  }
}

function setUp() {
  const items = new MemoryItems();
  const time = { now: 1_000_000, monotonic: 0 };
  const views = new ListViews(items, { layout, clock: () => time.now, cacheClock: () => time.monotonic });
  const page = (afterId: number, limit: number, status: PetStatus | undefined, walkStartedAt: number) =>
    walkPage({ afterId, limit, status, walkStartedAt }, views, views, layout);
  const walk = async (limit: number, status?: PetStatus, walkStartedAt = time.now) => {
    const ids: number[] = [];
    let after = 0;
    for (let pages = 0; pages < 10_000; pages++) {
      const result = await page(after, limit, status, walkStartedAt);
      ids.push(...result.pets.map((pet) => pet.id));
      if (result.nextAfterId === undefined) return ids;
      after = result.nextAfterId;
    }
    throw new Error('the walk did not end');
  };
  const advance = (ms: number) => {
    time.now += ms;
    time.monotonic += ms;
  };
  return { items, time, page, walk, advance };
}

describe('the walk, over storage in memory', () => {
  it('lists every pet once, ascending, whatever the page size and filter, over blocks part-used and skipped', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 100 }),
        fc.constantFrom<PetStatus | undefined>(undefined, 'available', 'sold'),
        async (ids, limit, status) => {
          const { items, walk } = setUp();
          for (const id of ids) items.add(id, id % 3 === 0 ? 'sold' : 'available', 0);
          const expected = items.pets.filter((pet) => status === undefined || pet.status === status).map((pet) => pet.id);
          expect(await walk(limit, status)).toEqual(expected.sort((a, b) => a - b));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads at most MAX_BLOCKS_PER_PAGE blocks a page for a filter few pets match, and links on', async () => {
    const { items, page } = setUp();
    for (let id = 1; id <= 500; id++) items.add(id, id === 500 ? 'sold' : 'available', 0);
    const first = await page(0, 20, 'sold', Number.POSITIVE_INFINITY);
    expect(first).toEqual({ pets: [], nextAfterId: MAX_BLOCKS_PER_PAGE * layout.blockSize });
    expect(items.queries).toBe(MAX_BLOCKS_PER_PAGE);
  });

  it('reads one block first, then twice as many at a time, four at most', () => {
    const sizes: number[] = [];
    let batch = 1;
    for (let read = 1; read < MAX_BLOCKS_PER_PAGE; read += batch) {
      batch = nextBatchSize(batch, read);
      sizes.push(batch);
    }
    expect(sizes.slice(0, 4)).toEqual([1, 2, 4, 4]);
  });
});

describe('read-after-write, over the views of one warm instance', () => {
  it('lists a pet in a new block in every walk begun a second after its create, and one begun before may end on its view', async () => {
    const { items, walk, advance, time } = setUp();
    for (let id = 1; id <= 45; id++) items.add(id, 'available', 0);
    const before = time.now;
    await walk(20);
    // A create elsewhere: the next block, above every block there was.
    advance(100);
    const created = items.add(51, 'sold', time.now);
    advance(1_000);
    expect(await walk(20)).toContain(created.id);
    expect(await walk(5, 'sold')).toEqual([created.id]);
    // A walk begun before the create may end on the instance's view (a pet created during a walk may or may not appear).
    const reads = items.frontierReads;
    await walk(20, undefined, before);
    expect(items.frontierReads).toBe(reads);
  });

  it('serves the pages of walks under way from one view of which blocks exist; a walk begun after it reads again', async () => {
    const { items, walk, advance, time } = setUp();
    for (let id = 1; id <= 15; id++) items.add(id, 'available', 0);
    const starts = [time.now, time.now + 10, time.now + 20];
    advance(100);
    await walk(100, undefined, starts[0]);
    const reads = items.frontierReads;
    // Walks begun before the view was read end on it, however many.
    for (const start of starts) await walk(100, undefined, start);
    expect(items.frontierReads).toBe(reads);
    // A walk begun now, after it: afresh.
    advance(1);
    await walk(100);
    expect(items.frontierReads).toBe(reads + 1);
  });
});
