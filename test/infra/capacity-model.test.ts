/**
 * SCALING.md's numbers come from scripts/capacity-model.ts: this keeps the two
 * equal, and pins the conclusions the document draws from them.
 */
import { readFileSync } from 'node:fs';
import {
  BEGIN_MARKER,
  components,
  END_MARKER,
  firstHardWall,
  firstHardWallLine,
  hotKey,
  queryReadUnits,
  raisableQuotas,
  renderCapacityTables,
  scalingDocument,
  walls,
  withTables,
} from '../../scripts/capacity-model';

const document = readFileSync(scalingDocument, 'utf8');

test('SCALING.md shows the tables the model computes (regenerate: npx tsx scripts/capacity-model.ts --write)', () => {
  expect(document).toContain(BEGIN_MARKER);
  expect(document).toContain(END_MARKER);
  expect(withTables(document, renderCapacityTables())).toBe(document);
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

test('one key needs sharded counters beyond 60× a Business key', () => {
  expect(hotKey(10).share).toBeLessThan(1);
  expect(hotKey(100).share).toBeGreaterThan(1);
});

test('a default page (21 items of 200 bytes read) costs one read unit', () => {
  expect(queryReadUnits(21)).toBe(1);
});
