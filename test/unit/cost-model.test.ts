import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { accessLogClass, accessLogFields, xraySampling } from '../../definitions/observability';
import {
  dynamoUnitsPerRequest,
  limiterMeasured,
  limiterScale,
  limiterScaleFactors,
  limiterScaleUnits,
  limiterWriteUnitsAt,
  rps,
} from '../../scripts/capacity-model';
import {
  bill,
  billAtFactors,
  factorBillLines,
  logBytesPerRequest,
  prices,
  renderBill,
  sampleAccessLogValues,
  totals,
  totalsAt,
  tracedShare,
} from '../../scripts/cost-model';
import { runScale } from '../support/limiter-scale/scale-run';

/** `npm run cost` (scripts/cost-model.ts): the 1× mix's bill per million requests, and what our limiter adds to it. */

it('ends with ours, usage plans only and the difference', () => {
  const last = renderBill().split('\n').at(-1) as string;
  expect(last).toMatch(
    /^per million requests of the capacity model's 1× \(60 Business keys at their full minute\): ours \$\d+\.\d\d, usage plans only \$\d+\.\d\d \(\+\d+\.\d %\)$/,
  );
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

describe('the bill at 1×, 10×, 100× and 1000× (issue 49): the limiter as the scale run measured it', () => {
  it('takes the limiter of each factor from the recorded scale run (bench/results/limiter-scale.json), the costlier routing', () => {
    expect(limiterScale.command).toMatch(/^npm run scale:limiter /);
    for (const factor of limiterScaleFactors) {
      const runs = limiterScale.runs.filter((run) => run.factor === factor && run.counterItem === 'as built');
      expect(runs.map((run) => run.routing).sort()).toEqual(['mostRecentlyUsed', 'random']);
      const costliest = Math.max(...runs.map((run) => run.writeUnitsPerRequest));
      expect(limiterScaleUnits(factor).writes).toBe(costliest);
      const row = billAtFactors().find((entry) => entry.factor === factor);
      expect(row).toMatchObject({ ...limiterScaleUnits(factor), ...totalsAt(limiterScaleUnits(factor)) });
    }
  });

  it('charges the rateLimits line the units it is given, and every other line as at 1×', () => {
    const units = { writes: 2, reads: 0.5 };
    const scaled = bill(units);
    const rateLimits = scaled.find((line) => line.item.startsWith('DynamoDB rateLimits'));
    expect(rateLimits?.dollars).toBeCloseTo(2 * prices.dynamoWritePerMillion + 0.5 * prices.dynamoReadPerMillion);
    const others = (lines: typeof scaled) => lines.filter((line) => !line.item.startsWith('DynamoDB rateLimits'));
    expect(others(scaled)).toEqual(others(bill()));
    expect(totalsAt(units).usagePlansOnly).toBeCloseTo(totals().usagePlansOnly);
  });

  it('README and SCALING.md state the bill at each factor as `npm run cost` prints it', () => {
    for (const document of ['README.md', 'SCALING.md']) {
      const text = readFileSync(join(__dirname, '../..', document), 'utf8');
      for (const line of factorBillLines()) expect(text).toContain(line);
    }
  });

  it('prints the bill at each factor beside usage plans only', () => {
    const text = renderBill();
    for (const factor of limiterScaleFactors)
      expect(text).toMatch(
        new RegExp(`${factor}×: [\\d.]+ write and [\\d.]+ read units a request: ours \\$[\\d.]+, usage plans only \\$[\\d.]+`),
      );
  });

  it('the rateLimits quota row takes write units per request from the run, in between factors on a log scale', () => {
    expect(limiterWriteUnitsAt(1)).toBe(limiterScaleUnits(1).writes);
    expect(limiterWriteUnitsAt(1000)).toBe(limiterScaleUnits(1000).writes);
    const between = limiterWriteUnitsAt(Math.sqrt(10));
    expect(between).toBeCloseTo((limiterScaleUnits(1).writes + limiterScaleUnits(10).writes) / 2);
  });

  // The 1× run of the recorded seed, replayed (about 90,000 requests, seconds): the file is what the scale mode measures, not a
  // number typed in. Environments name themselves at random (functions/rate-limit/limiter.ts), so the replay may differ a little.
  it('replaying the recorded 1× run (random routing) reproduces its write and read units per request within 2 %', async () => {
    const recorded = limiterScale.runs.find((run) => run.factor === 1 && run.routing === 'random' && run.counterItem === 'as built')!;
    const { seed, warmupSeconds, measuredSeconds } = limiterScale;
    const replay = await runScale({ factor: 1, routing: 'random', seed, warmupSeconds, measuredSeconds });
    expect(replay.servedPastLimit).toBe(0);
    expect(replay.refusalsBeyondBound).toBe(0);
    expect(Math.abs(replay.writeUnitsPerRequest / recorded.writeUnitsPerRequest - 1)).toBeLessThan(0.02);
    expect(Math.abs(replay.readUnitsPerRequest / recorded.readUnitsPerRequest - 1)).toBeLessThan(0.02);
  });
});
