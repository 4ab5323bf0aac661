/**
 * `npm run scale [-- --seconds N] [--multiple M] [--burst S] [--single-key] [--mix adversarial] [--strict] [--through use-cases]`: the scale test at length,
 * on its own DynamoDB Local, behind the partition-limit simulator
 * (test/support/partition-limit-proxy.ts). Runs the baseline mix at 100× and
 * 1000× today's traffic (limits and traffic divided by the factor), prints one
 * report per run, and exits non-zero if any request was throttled or failed, or
 * a walk was wrong. CI runs a shortened form (test/integration/scale.test.ts).
 * `--mix adversarial`: pages of 100, 10 % of walks on a status few pets have,
 * first pages of that short list polled, creates from few and from many
 * instances (test/support/scale-run.ts). `--strict`: no burst whatever --burst
 * says (the simulator's default), and the run lasts ten of the windows the
 * simulator judges a write unit over (max(1 s, factor ÷ 1,000 s); 100 s at 1000×).
 * The requests go through the deployed handlers as Business keys' API Gateway
 * events (the limiter writes each key's counter item); `--through use-cases`
 * sends them to the use cases instead (lighter: the CI run's way).
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
  const strict = process.argv.includes('--strict');
  const adversarial = process.argv.includes('adversarial');
  const only = argument('multiple', 0);
  const runs = [
    { multiple: 100, factor: 1_000 },
    { multiple: 1_000, factor: 10_000 },
  ].filter((run) => !only || run.multiple === only);
  // --strict: ten of the windows a write unit is judged over at the largest factor run, unless --seconds says more.
  const strictSeconds = Math.max(...runs.map((run) => 10 * Math.max(1, run.factor / 1_000)));
  // Otherwise 10 s by default: the walks under way are then finished at the mix's rate of lists, which takes minutes more.
  const seconds = argument('seconds', strict ? strictSeconds : 10);
  if (strict && seconds < strictSeconds) throw new Error(`--strict: run at least ${strictSeconds} s (--seconds)`);
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
        through: process.argv.includes('use-cases') ? 'use cases' : 'handlers',
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
