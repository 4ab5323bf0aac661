/**
 * `npm run scale:limiter [-- --seed N] [--warmup S] [--seconds S] [--write]`:
 * the rate limiter at 1×, 10×, 100× and 1000× today's traffic, in virtual time
 * (test/support/limiter-scale/scale-run.ts): the real limiter over the
 * in-memory DynamoDB, metered by item size and throttled per partition, for
 * SCALING.md's customers on function environments kept as Lambda keeps them,
 * each factor under random and most-recently-used routing. Prints one row per
 * factor and routing, and exits 1 if a customer was served past a limit or
 * refused beyond the documented bound; --write records them in bench/results/limiter-scale.json,
 * which `npm run cost` (scripts/cost-model.ts) and SCALING.md take the
 * limiter's figures from. (`npm run scale` is another test: the pets table's
 * partitions on DynamoDB Local.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lambdaLifecycle, type Routing } from '../test/support/limiter-scale/lambda-pool';
import { partitionLimitsPerSecond } from '../test/support/limiter-scale/metered-table';
import { runScale, type ScaleFigures } from '../test/support/limiter-scale/scale-run';
import { assumedEnterpriseLimits, HOT_OVERSHOOT, ZIPF_EXPONENT } from '../test/support/limiter-scale/workload';
import { type LimiterScaleResults, limiterScaleFactors, totalsAt } from './cost-model';

const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};

const routings: Routing[] = ['random', 'mostRecentlyUsed'];
const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

export const LIMITER_SCALE_BEGIN = '<!-- limiter-scale:begin (npm run scale:limiter -- --write) -->';
export const LIMITER_SCALE_END = '<!-- limiter-scale:end -->';

const columns = [
  'factor',
  'routing',
  'environments',
  'writes a request',
  'write units a request',
  'read units a request',
  'stranded spare, mean / max',
  'largest counter item',
  '429 under the limit (beyond the bound)',
  'served past a limit',
  '5xx (throttled counter calls)',
  '$ per million',
];

/** Whose requests failed, by plan (", enterprise 120"), if any did. */
const byPlan = (errors: ScaleFigures['serverErrorsByPlan'] = {}) =>
  Object.entries(errors)
    .map(([plan, count]) => `, ${plan} ${count.toLocaleString('en-US')}`)
    .join('');

function row(figures: ScaleFigures): string {
  const { ours } = totalsAt({ writes: figures.writeUnitsPerRequest, reads: figures.readUnitsPerRequest });
  const environments = Object.values(figures.environments).reduce((sum, count) => sum + count, 0);
  const cells = [
    `${figures.factor}×`,
    figures.counterItem === 'as built' ? figures.routing : `${figures.routing}, item charged under 1 KB`,
    environments.toLocaleString('en-US'),
    figures.writesPerRequest.toFixed(3),
    figures.writeUnitsPerRequest.toFixed(3),
    figures.readUnitsPerRequest.toFixed(3),
    `${percent(figures.strandedShare.mean)} / ${percent(figures.strandedShare.max)}`,
    `${(figures.largestItemBytes / 1024).toFixed(1)} KB`,
    `${figures.refusalsUnderLimit.toLocaleString('en-US')} (${figures.refusalsBeyondBound})`,
    String(figures.servedPastLimit),
    `${figures.serverErrors.toLocaleString('en-US')} (${figures.throttledCalls.toLocaleString('en-US')})${byPlan(figures.serverErrorsByPlan)}`,
    `$${ours.toFixed(2)}`,
  ];
  return `| ${cells.join(' | ')} |`;
}

/** The run's table as Markdown: printed, and kept in SCALING.md between the markers. */
export function renderScaleTable(results: Pick<LimiterScaleResults, 'command' | 'runs'>): string {
  const { usagePlansOnly } = totalsAt({ writes: 0, reads: 0 });
  return [
    `\`${results.command}\` (virtual time; per request of the measured seconds; usage plans only: $${usagePlansOnly.toFixed(2)} per million):`,
    '',
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...(results.runs as ScaleFigures[]).map(row),
  ].join('\n');
}

/** `document` with the table between the markers replaced. */
export function withScaleTable(document: string, table: string): string {
  const begin = document.indexOf(LIMITER_SCALE_BEGIN);
  const end = document.indexOf(LIMITER_SCALE_END);
  if (begin < 0 || end < begin) throw new Error('SCALING.md has no limiter-scale markers');
  return `${document.slice(0, begin + LIMITER_SCALE_BEGIN.length)}\n${table}\n${document.slice(end)}`;
}

async function main(): Promise<void> {
  const seed = argument('seed', 49);
  const warmupSeconds = argument('warmup', 30);
  const measuredSeconds = argument('seconds', 60);
  console.log(`seed ${seed}; ${warmupSeconds} s of warm-up, then ${measuredSeconds} s measured, in virtual time`);
  const startedMs = performance.now();
  const runs: ScaleFigures[] = [];
  // Each factor and routing as built, then the model change SCALING.md describes (a counter item of constant size), random routing.
  const plans = [
    ...limiterScaleFactors.flatMap((factor) => routings.map((routing) => ({ factor, routing, counterItem: 'as built' as const }))),
    ...limiterScaleFactors.map((factor) => ({ factor, routing: 'random' as const, counterItem: 'under 1 KB' as const })),
  ];
  for (const plan of plans) {
    runs.push(await runScale({ ...plan, seed, warmupSeconds, measuredSeconds }));
    console.log(row(runs.at(-1)!));
  }
  const results = resultsOf({ seed, warmupSeconds, measuredSeconds, runs });
  console.log(`\n${renderScaleTable(results)}\n\n${legend}`);
  console.log(`${((performance.now() - startedMs) / 60_000).toFixed(1)} minutes`);
  if (process.argv.includes('--write')) write(results);
  // The documented promises (docs/clients.md, "How exact") are the run's pass or fail; cost and 5xx are what it reports.
  const broken = runs.filter((run) => run.servedPastLimit > 0 || run.refusalsBeyondBound > 0);
  if (broken.length > 0) {
    console.error(`exactness broken at ${broken.map((run) => `${run.factor}× ${run.routing}`).join(', ')}`);
    process.exitCode = 1;
  }
}

const legend = [
  "environments: warm, of the three functions; writes, write and read units: the limiter's on the rateLimits table, per request;",
  "stranded spare: how far the minute's X-RateLimit-Remaining fell below the truth, a share of the per-minute limit (docs/clients.md bounds it at a tenth);",
  'largest counter item: DynamoDB refuses an item over 400 KB; 429 under the limit: refused while the customer had been served less than',
  "the window's limit (beyond the documented tenth: must be 0); served past a limit: must be 0; 5xx: a throttled counter call fails its request;",
  '$ per million: the whole bill with these limiter units (scripts/cost-model.ts).',
].join('\n');

function resultsOf(run: { seed: number; warmupSeconds: number; measuredSeconds: number; runs: ScaleFigures[] }): LimiterScaleResults {
  return {
    command: `npm run scale:limiter -- --seed ${run.seed} --warmup ${run.warmupSeconds} --seconds ${run.measuredSeconds} --write`,
    assumptions: {
      lambdaLifecycle,
      partitionLimitsPerSecond,
      enterpriseLimits: assumedEnterpriseLimits,
      zipfExponent: ZIPF_EXPONENT,
      hotOvershoot: HOT_OVERSHOOT,
    },
    ...run,
  };
}

function write(results: LimiterScaleResults): void {
  const root = join(__dirname, '..');
  writeFileSync(join(root, 'bench', 'results', 'limiter-scale.json'), `${JSON.stringify(results, null, 2)}\n`);
  const scaling = join(root, 'SCALING.md');
  writeFileSync(scaling, withScaleTable(readFileSync(scaling, 'utf8'), renderScaleTable(results)));
  console.log('wrote bench/results/limiter-scale.json and its table in SCALING.md');
}

if (require.main === module)
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
