import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dynamoUnitsPerRequest, limiterMeasured } from '../../scripts/capacity-model';
import { bill, prices, renderBill, totals } from '../../scripts/cost-model';

/** `npm run cost` (scripts/cost-model.ts): the 1× mix's bill per million requests, and what our limiter adds to it. */

it('ends with ours, usage plans only and the difference, at most 5 %', () => {
  const last = renderBill().split('\n').at(-1) as string;
  expect(last).toMatch(/^per million requests: ours \$\d+\.\d\d, usage plans only \$\d+\.\d\d \(\+\d+\.\d %\)$/);
  const { ours, usagePlansOnly, extraPercent } = totals();
  expect(ours).toBeGreaterThan(usagePlansOnly);
  expect(extraPercent).toBeLessThanOrEqual(5);
});

it('charges the limiter the units the capacity model takes from the measurement', () => {
  const rateLimits = bill().find((line) => line.item.startsWith('DynamoDB rateLimits'));
  const measured = limiterMeasured.businessMinuteOver20Instances;
  expect(dynamoUnitsPerRequest.rateLimits).toEqual({ writes: measured.writeUnits / 1_000, reads: measured.readUnits / 1_000 });
  expect(rateLimits?.dollars).toBeCloseTo(
    dynamoUnitsPerRequest.rateLimits.writes * prices.dynamoWritePerMillion +
      dynamoUnitsPerRequest.rateLimits.reads * prices.dynamoReadPerMillion,
  );
  expect(rateLimits?.limiter).toBe(true);
});

it('has a line for every part of the bill, and cites an AWS pricing page for every price', () => {
  const items = bill().map((line) => line.item);
  for (const part of [
    'API Gateway',
    'AWS WAF',
    'Lambda requests',
    'Lambda duration',
    'DynamoDB',
    'CloudWatch Logs',
    'X-Ray',
    'Data transfer',
  ])
    expect(items.some((item) => item.startsWith(part))).toBe(true);
  const source = readFileSync(join(__dirname, '../../scripts/cost-model.ts'), 'utf8');
  const pricesBlock = source.slice(source.indexOf('export const prices'), source.indexOf('} as const;'));
  for (const name of Object.keys(prices)) {
    const comment = pricesBlock
      .slice(0, pricesBlock.indexOf(`${name}:`))
      .split('/**')
      .at(-1) as string;
    expect(comment).toMatch(/https:\/\/aws\.amazon\.com\/[a-z0-9-]+\/pricing\//);
  }
});
