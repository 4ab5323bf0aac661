/**
 * SCALING.md's numbers come from scripts/capacity-model.ts: this keeps the two
 * equal, and pins the conclusions the document draws from them.
 */
import { readFileSync } from 'node:fs';
import {
  awsLimits,
  BEGIN_MARKER,
  END_MARKER,
  hotKey,
  queryReadUnits,
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

test('the first hard wall is the byList partition: 1,000 creates per second, at 10× today', () => {
  const hard = walls().filter((wall) => wall.component.kind === 'hard');
  expect(hard[0]!.component.name).toMatch(/^byList .*writes$/);
  expect(hard[0]!.component.limit).toBe(awsLimits.partitionWriteUnits);
  expect(hard[0]!.multiple).toBeCloseTo(10);
  // Nothing grows into a limit before it but a surge the table adapts to.
  expect(
    walls()
      .filter((wall) => wall.multiple < hard[0]!.multiple)
      .every((wall) => wall.component.kind === 'surge'),
  ).toBe(true);
});

test('one key needs sharded counters beyond 60× a Business key', () => {
  expect(hotKey(10).share).toBeLessThan(1);
  expect(hotKey(100).share).toBeGreaterThan(1);
});

test('a default page (21 items read) costs half a read unit', () => {
  expect(queryReadUnits(21)).toBe(0.5);
});
