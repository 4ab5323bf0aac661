/**
 * `npm run simulate -- --seeds N [--from S]` runs N more histories of the
 * customer simulation (test/support/customer-simulation.ts) than CI does;
 * `npm run simulate -- --seed S` replays one exactly and prints its steps.
 * Exits non-zero when any history breaks an invariant, naming its seed.
 * `--first-failure` stops at the first broken history and prints it as a last
 * line of JSON (`{"seed","invariant"}`, or `{}`); `--every-promise` runs every
 * seed and prints, as a last line of JSON, each promise broken with the first
 * seed that broke it: what `npm run mutate` reads.
 */
import { parseArgs } from 'node:util';
import type { HistoryResult } from '../test/support/customer-simulation';

// Before the functions' modules load (they read these once): the simulation's instances log and measure nothing.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
const simulation = import('../test/support/customer-simulation');

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    seed: { type: 'string' },
    from: { type: 'string' },
    'first-failure': { type: 'boolean' },
    'every-promise': { type: 'boolean' },
  },
});

function report(result: HistoryResult, withSteps: boolean): void {
  if (!result.failure) return;
  console.log(`seed ${result.seed} (${result.scenario}) broke "${result.failure.invariant}": ${result.failure.message}`);
  if (withSteps) console.log(`the steps that led to it:\n  ${result.failure.steps.join('\n  ')}`);
  console.log(`replay: npm run simulate -- --seed ${result.seed}`);
}

async function main(): Promise<number> {
  const { runHistory } = await simulation;
  if (values.seed !== undefined) {
    const result = await runHistory(Number(values.seed), { stepsKept: 2_000, traceCalls: true });
    report(result, true);
    if (!result.failure)
      console.log(`seed ${result.seed} (${result.scenario}): ${result.requests} requests, ${result.served} served, every promise held`);
    return result.failure ? 1 : 0;
  }
  const count = Number(values.seeds ?? 10_000);
  const from = Number(values.from ?? 1_000_000);
  const failed: HistoryResult[] = [];
  const firstSeedOf: Record<string, number> = {};
  const started = Date.now();
  for (let seed = from; seed < from + count; seed++) {
    const result = await runHistory(seed);
    for (const finding of result.findings) firstSeedOf[finding.promise] ??= seed;
    if (result.failure) {
      failed.push(result);
      if (!values['every-promise']) report(result, failed.length === 1);
      if (values['first-failure']) break;
    }
  }
  if (values['every-promise']) {
    console.log(JSON.stringify(firstSeedOf));
    return failed.length > 0 ? 1 : 0;
  }
  if (values['first-failure']) {
    const first = failed[0]?.failure ? { seed: failed[0].seed, invariant: failed[0].failure.invariant } : {};
    console.log(JSON.stringify(first));
    return failed.length > 0 ? 1 : 0;
  }
  console.log(
    `${count} histories (seeds ${from}–${from + count - 1}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ${failed.length} broke an invariant`,
  );
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
