import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { accessLogClass, accessLogFields, xraySampling } from '../../definitions/observability';
import { dynamoUnitsPerRequest, limiterMeasured, rps } from '../../scripts/capacity-model';
import { bill, logBytesPerRequest, prices, renderBill, sampleAccessLogValues, totals, tracedShare } from '../../scripts/cost-model';

/** `npm run cost` (scripts/cost-model.ts): the 1× mix's bill per million requests, and what our limiter adds to it. */

it('ends with ours, usage plans only and the difference', () => {
  const last = renderBill().split('\n').at(-1) as string;
  expect(last).toMatch(/^per million requests: ours \$\d+\.\d\d, usage plans only \$\d+\.\d\d \(\+\d+\.\d %\)$/);
  const { ours, usagePlansOnly } = totals();
  expect(ours).toBeGreaterThan(usagePlansOnly);
});

// The bill's budget (issue 39): a line added to every request (a field, a dimension, a trace) must buy its place.
it('a million requests of the 1× mix cost at most $5.60', () => {
  expect(totals().ours).toBeLessThanOrEqual(5.6);
});

// The limiter's budget (issue 39): as the rest of the bill gets cheaper, the limiter must cost at most a twentieth of it.
it('our limiter adds at most 5 % to the bill of the same service with usage plans only', () => {
  expect(totals().extraPercent).toBeLessThanOrEqual(5);
});

it('charges the limiter the units measured minute after minute (the 1× mix is steady traffic)', () => {
  const rateLimits = bill().find((line) => line.item.startsWith('DynamoDB rateLimits'));
  const measured = limiterMeasured.businessSteadyMinuteOver20Instances;
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

it("charges the functions' log bytes at the Standard price and the access log's at its group's class (test/integration/log-bytes.test.ts counts them)", () => {
  const logs = logBytesPerRequest();
  const line = (start: string) => bill().find((entry) => entry.item.startsWith(start));
  expect(line('CloudWatch Logs, functions')?.dollars).toBeCloseTo(logs.functionLogs * 1e-3 * prices.logsIngestionPerGb, 6);
  const accessLogPrice = accessLogClass === 'STANDARD' ? prices.logsIngestionPerGb : prices.logsInfrequentAccessIngestionPerGb;
  expect(line('CloudWatch Logs, access log')?.dollars).toBeCloseTo(logs.accessLog * 1e-3 * accessLogPrice, 6);
  expect(line('CloudWatch Logs, access log')?.item).toContain(`${logs.accessLog} bytes`);
  // Every variable of the access-log format has a value of its usual length.
  expect(Object.keys(sampleAccessLogValues).sort()).toEqual(Object.values(accessLogFields).sort());
});

it("traces what the stage's sampling rule keeps: the reservoir each second and the fixed rate of the rest", () => {
  const perSecond = rps(1);
  const { reservoirPerSecond, fixedRate } = xraySampling;
  expect(tracedShare()).toBeCloseTo((reservoirPerSecond + fixedRate * (perSecond - reservoirPerSecond)) / perSecond, 6);
  expect(bill().find((entry) => entry.item.startsWith('X-Ray'))?.dollars).toBeCloseTo(tracedShare() * prices.xrayTracesPerMillion, 6);
});
