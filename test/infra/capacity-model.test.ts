/**
 * SCALING.md's numbers come from scripts/capacity-model.ts: this keeps the two
 * equal, and pins the conclusions the document draws from them.
 */
import { readFileSync } from 'node:fs';
import { MAX_BLOCKS_PER_PAGE } from '../../functions/domain/pet-walk';
import {
  ADVERSARIAL_BEGIN_MARKER,
  ADVERSARIAL_END_MARKER,
  assumptions,
  awsLimits,
  BEGIN_MARKER,
  bindsAt,
  components,
  componentsFor,
  END_MARKER,
  firstHardWall,
  firstHardWallLine,
  hotKey,
  hotKeyBindsAt,
  limiterMeasured,
  limiterUnitsPerRequest,
  limiterWriteUnitsAt,
  listMixes,
  pageReadUnits,
  queryReadUnits,
  raisableQuotas,
  renderCapacityTables,
  renderListMix,
  scalingDocument,
  tailPageShare,
  tailShareBindingAt,
  walls,
  withTables,
} from '../../scripts/capacity-model';

const document = readFileSync(scalingDocument, 'utf8');

test('SCALING.md shows the tables the model computes (regenerate: npx tsx scripts/capacity-model.ts --write)', () => {
  expect(document).toContain(BEGIN_MARKER);
  expect(document).toContain(END_MARKER);
  expect(withTables(document, renderCapacityTables())).toBe(document);
  expect(withTables(document, renderListMix(listMixes.adversarial), ADVERSARIAL_BEGIN_MARKER, ADVERSARIAL_END_MARKER)).toBe(document);
});

test('no partition-level limit binds below 1000×: only quotas AWS raises, and surges', () => {
  const wall = firstHardWall();
  expect(wall.multiple).toBeGreaterThanOrEqual(1000);
  expect(firstHardWallLine()).toMatch(/^first hard wall: [\d,]+× \(.+\)$/);
  expect(
    walls()
      .filter((w) => w.multiple < wall.multiple)
      .every((w) => w.component.kind === 'surge' || w.component.kind === 'soft quota'),
  ).toBe(true);
  // Every quota that binds before it is listed with the multiple at which to ask: before it binds.
  for (const quota of raisableQuotas()) expect(quota.askAt).toBeLessThan(quota.component.limit / quota.component.load(1));
});

test('the rows are a list others can add to: a new hard row below 1000× becomes the first wall', () => {
  components.push({ name: 'a test row', unit: 'writes', limit: 100, kind: 'hard', load: (m) => m });
  try {
    expect(firstHardWall().component.name).toBe('a test row');
    expect(firstHardWallLine()).toBe('first hard wall: 100× (a test row, 100 writes per second)');
  } finally {
    components.pop();
  }
});

const row = (name: string) => {
  const found = components.find((c) => c.name.startsWith(name));
  if (!found) throw new Error(`no row ${name}`);
  return found;
};

test('the limiter costs a fraction of a write per request (leases, measured): at most 0.3 write units at a full Business minute over 20 instances', () => {
  expect(limiterUnitsPerRequest.write).toBeLessThanOrEqual(0.3);
  expect(limiterMeasured.businessMinuteOverOneInstance.writeUnits / 1_000).toBeLessThanOrEqual(0.3);
  // Every request is a lease write or a read of the key's item.
  expect(
    limiterMeasured.businessMinuteOver20Instances.writeUnits + limiterMeasured.businessMinuteOver20Instances.readUnits,
  ).toBeGreaterThanOrEqual(1_000);
  const row = (name: string) => components.find((c) => c.name === name) as (typeof components)[number];
  // The table's quota: the plan mix as the limiter's scale run measured it at each factor (issue 49), not this one minute.
  expect(row('rateLimits table, quota').load(1)).toBeCloseTo(1_000 * limiterWriteUnitsAt(1));
  expect(row('rateLimits table, quota').load(1000)).toBeCloseTo(1_000_000 * limiterWriteUnitsAt(1000));
  expect(row('rateLimits table, sudden surge').load(1)).toBeCloseTo(1_000 * Math.max(limiterUnitsPerRequest.write, limiterWriteUnitsAt(1)));
});

test("one key's counter item: a whole Business minute within one second fits a partition; one key alone binds it past 100× a Business key", () => {
  expect(hotKey(1).minuteInOneSecond.writeUnits).toBeLessThan(awsLimits.partitionWriteUnits);
  expect(hotKey(1).minuteInOneSecond.readUnits).toBeLessThan(awsLimits.partitionReadUnits);
  expect(hotKeyBindsAt()).toBeGreaterThan(100);
  expect(hotKey(hotKeyBindsAt() * 1.01).share).toBeGreaterThanOrEqual(1);
});

test('pages reaching the newest pets: at most one fresh read per instance per half second, spread as the newest block moves', () => {
  expect(tailPageShare).toBeCloseTo(((1 - assumptions.firstPageShare) * assumptions.pageSize) / assumptions.listPetsAtLeast);
  // How many such pages the design takes at 1000× (a list of a few thousand pets, or polling clients): well above the share.
  const binding = tailShareBindingAt(1_000);
  expect(binding.share).toBeGreaterThan(100 * tailPageShare);
  expect(binding.share).toBe(Math.min(binding.counterCopies, binding.newestBlock));
});

test('walks under way that end at the newest pets cost each list instance one Query of the newest block per 10 s, over the shards the newest blocks take', () => {
  const views = row("the newest block's shard, reads (walks under way");
  // 24,000 list instances at 1000× (600,000 pages a second, 40 ms each), each reading the block once per 10 s; the counter
  // hands out 500 blocks a second there, on consecutive shards: the reads spread over all 256, the busiest 1.5× the average.
  expect(views.load(1_000)).toBeCloseTo((((600_000 * 0.04) / 10) * queryReadUnits(21)) / (256 / 1.5));
  // At 1× a block lasts 2 s: every view reads the same shard.
  expect(views.load(1)).toBeCloseTo(((1_000 * 0.6 * 0.04) / 10) * queryReadUnits(21));
  expect(bindsAt(views)).toBeGreaterThanOrEqual(1_000);
});

test('the adversarial mix of list clients (pages of 100, 10 % on a rare status) is charged, with its own first hard wall at 1000× or more', () => {
  const adversarial = componentsFor(listMixes.adversarial);
  const wall = firstHardWall(adversarial);
  expect(renderListMix(listMixes.adversarial)).toContain(`adversarial mix: ${firstHardWallLine(adversarial)}`);
  // A page of 100 on a dense list reads one block: one Query of 101 pets, 2.5 read units (test/unit/pet-walk.test.ts
  // walks it); a rare status's page reads MAX_BLOCKS_PER_PAGE blocks, half a unit each.
  expect(pageReadUnits(listMixes.adversarial)).toBe(2.5);
  expect(listMixes.adversarial.rareQueriesPerPage).toBe(MAX_BLOCKS_PER_PAGE);
  expect(wall.multiple).toBeGreaterThanOrEqual(1_000);
  expect(wall.component.name).toBe('one list shard, reads (next pages)');
  // What it would be if pages of 100 still crossed a block's end (two Queries of 51 pets, 3 read units): below 1000×.
  const crossing = componentsFor({ ...listMixes.adversarial, queriesPerPage: 2 });
  expect(pageReadUnits({ ...listMixes.adversarial, queriesPerPage: 2 })).toBe(3);
  expect(firstHardWall(crossing).multiple).toBeLessThan(1_000);
  // The default mix's wall too.
  expect(firstHardWall().multiple).toBeGreaterThanOrEqual(1_000);
});

test('a default page (21 items of 200 bytes read) costs one read unit', () => {
  expect(queryReadUnits(21)).toBe(1);
});
