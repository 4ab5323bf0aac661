/**
 * `npm run scale [-- --seconds N] [--multiple M] [--burst S] [--single-key] [--mix adversarial] [--strict] [--through handlers]`: the scale test at length,
 * on its own DynamoDB Local, behind the partition-limit simulator
 * (test/support/partition-limit-proxy.ts). Runs the baseline mix at 100× and
 * 1000× today's traffic (limits and traffic divided by the factor), prints one
 * report per run, and exits non-zero if any request was throttled or failed, or
 * a walk was wrong. CI runs a shortened form (test/integration/scale.test.ts).
 * `--mix adversarial`: pages of 100, 10 % of walks on a status few pets have,
 * first pages of that short list polled, creates from few and from many
 * instances (test/support/scale-run.ts). `--strict`: no burst whatever --burst
 * says (the simulator's default), and the run must last ten of the windows the
 * simulator judges a write unit over (max(1 s, factor ÷ 1,000 s)). `--through
 * handlers`: the requests go through the deployed handlers as Business keys'
 * API Gateway events (the limiter writes each key's counter item) instead of
 * the use cases.
 */
import './middy-for-require';
import { startDynamoDbLocal } from '../local/dynamodb-local';
import { shardedDesign, singleListKeyDesign } from '../test/scale/designs';
import { runScale } from '../test/support/scale-run';

const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};

// The handlers' logs and metrics lines are for CloudWatch; here they would bury the report.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

async function main(): Promise<void> {
  // 10 s by default: the walks under way are then finished at the mix's rate of lists, which takes minutes more.
  const strict = process.argv.includes('--strict');
  const adversarial = process.argv.includes('adversarial');
  const seconds = argument('seconds', 10);
  const only = argument('multiple', 0);
  const runs = [
    { multiple: 100, factor: 1_000 },
    { multiple: 1_000, factor: 10_000 },
  ].filter((run) => !only || run.multiple === only);
  for (const run of runs) {
    const windowSeconds = Math.max(1, run.factor / 1_000);
    if (strict && seconds < 10 * windowSeconds)
      throw new Error(`--strict at factor ${run.factor}: run at least ${10 * windowSeconds} s (--seconds)`);
  }
  const dynamo = await startDynamoDbLocal({});
  let bad = false;
  try {
    for (const run of runs) {
      const report = await runScale({
        endpoint: dynamo.endpoint,
        design: process.argv.includes('--single-key') ? singleListKeyDesign : shardedDesign,
        ...run,
        seconds,
        // Creates in turn over instances whose blocks lie on distinct shards (test/support/scale-run.ts): the adversarial
        // mix's few take half the creates and the many the rest, 256 in all; the default mix's take them all.
        // List instances: 24,000 concurrent listPets executions at 1000× divided by the factor, rounded up (at 100×, 2,400).
        instances: { createPet: adversarial ? 64 : 256, listPets: 3, getPet: 4 },
        seedPets: 512,
        // None by default, as AWS lends none above a partition's limits; some shows how much a run would lean on it.
        burstSeconds: strict ? 0 : argument('burst', 0),
        mix: adversarial ? 'adversarial' : 'default',
        through: process.argv.includes('handlers') ? 'handlers' : 'use cases',
        log: (line) => console.log(line),
      });
      console.log(`${report.text}\n`);
      if (report.throttles > 0 || report.failedRequests > 0 || report.walks.wrong.length > 0 || !report.createsStoredOnce) bad = true;
    }
  } finally {
    await dynamo.stop();
  }
  process.exitCode = bad ? 1 : 0;
}

void main();
