/**
 * `npm run bench [-- --quick]`: performance evidence, our Lambda functions side
 * by side with what a team would write instead and with the floor (the
 * operation's DynamoDB request alone), measured in one run so that ratios hold
 * on a noisy shared machine. The contenders are described in
 * support/contenders.ts, each measure in measures/.
 *
 * Writes bench/results/latest.md and bench/results/ratios.svg (a --quick smoke
 * run writes under bench/results/tmp/ instead); --readme also rewrites the
 * README's Performance section from the run. Traffic goes to 127.0.0.1 only.
 *
 * `npm run bench -- --only warm` runs the warm rows alone (in process, against
 * the stubbed client and DynamoDB Local; about a minute, `--quick` shortens
 * it): for iterating on the warm path. It prints the rows and their targets and
 * writes nothing: a partial run is never the recorded one.
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command, Option } from 'commander';
import { assertJavaAvailable, startDynamoDbLocal } from '../local/dynamodb-local';
import { measureAuthorizer } from './measures/authorizer';
import { buildBundles, reportBundleSizes } from './measures/bundles';
import { measureColdInit } from './measures/cold-init';
import { measureEndToEnd } from './measures/end-to-end';
import { measureListGrowth } from './measures/list-growth';
import { measureListWalkRequests } from './measures/list-walk-requests';
import { measureOverlapFloor } from './measures/overlap-floor';
import { measureRequestsPerCall } from './measures/requests-per-call';
import { measureRoundTrips } from './measures/round-trips';
import { type LoadedBundle, loadBundle, measureWarmOnDynamoDbLocal, measureWarmStubbed, SMALL_LIST } from './measures/warm';
import { adminClient, createTables, loadPets } from './support/dynamodb';
import { benchTableNames, tableEnvironment } from './support/lambda-environment';
import { checkLine, markdownTable } from './support/report';
import { writeResults } from './support/results';
import { type BenchRun, fullSettings, progressReporter, quickSettings } from './support/run-context';

const projectRoot = join(__dirname, '..');
const resultsDir = join(__dirname, 'results');
const workDir = join(resultsDir, 'tmp');

/** The measures of a partial run (--only): each name selects rows of the table. */
const partialRuns = ['warm'] as const;

const cli = new Command()
  .description('Benchmark our Lambda functions against a plain-handler and an Express baseline, and the floor.')
  .option(
    '--quick',
    'a short smoke run (fewer processes and invocations, 10,000 pets instead of 100,000) that writes to bench/results/tmp/, not the recorded results',
  )
  .option('--readme', "also rewrite README.md's Performance section from this run (a full run only)")
  .addOption(
    new Option(
      '--only <measures>',
      'run only these rows and print them, writing no results: the warm rows, stubbed and on DynamoDB Local',
    ).choices(partialRuns),
  )
  .parse()
  .opts<{ quick?: boolean; readme?: boolean; only?: (typeof partialRuns)[number] }>();
const only = cli.only;

/** Functions write metrics and logs to stdout as in Lambda; here that output is swallowed while measuring, so stdout keeps the table. */
const writeStdout = process.stdout.write.bind(process.stdout);
function swallowStdout(): void {
  process.stdout.write = ((_chunk: unknown, ...rest: unknown[]) => {
    const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
}
function restoreStdout(): void {
  process.stdout.write = writeStdout;
}

/** The measures that need DynamoDB Local, on the service's tables with 100 pets to read. */
async function measureOnDynamoDbLocal(run: BenchRun): Promise<void> {
  run.progress('starting DynamoDB Local (in memory) and creating the tables');
  const dynamo = await startDynamoDbLocal();
  try {
    const endpoint = dynamo.endpoint;
    await createTables(endpoint, 'bench');
    const admin = adminClient(endpoint);
    await loadPets(admin, benchTableNames.pets, SMALL_LIST);
    // The bundled handlers read these at import, as in Lambda.
    process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
    Object.assign(process.env, tableEnvironment(benchTableNames));
    swallowStdout();
    run.progress('importing the bundles (their handlers connect to DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB)');
    const loaded = new Map<string, LoadedBundle>();
    const moduleOf = (name: string) => loaded.get(name) as LoadedBundle;
    for (const name of ['ours', 'plain', 'floor']
      .flatMap((impl) => ['getPet', 'createPet', 'listPets', 'authorizer'].map((op) => `${impl}-${op}`))
      .filter((name) => name !== 'floor-authorizer')) {
      loaded.set(name, await loadBundle(run.bundle(name)));
    }
    loaded.set('express', await loadBundle(run.bundle('express')));

    await measureWarmStubbed(run, moduleOf);
    await measureWarmOnDynamoDbLocal(run, moduleOf);
    if (only === 'warm') return;
    await measureOverlapFloor(run, endpoint, moduleOf);
    await measureRoundTrips(run, endpoint, moduleOf);
    await measureAuthorizer(run, admin, moduleOf);
    await measureRequestsPerCall(run, endpoint, moduleOf);
    await measureListWalkRequests(run, endpoint);
    await measureListGrowth(run, endpoint, admin);
    await measureEndToEnd(run, endpoint);
    admin.destroy();
  } finally {
    await dynamo.stop();
    restoreStdout();
  }
}

async function main(): Promise<void> {
  // DynamoDB Local needs Java: say so now rather than after the cold starts.
  assertJavaAvailable();
  // As NODE_OPTIONS=--enable-source-maps does in our functions' environment.
  process.setSourceMapsEnabled(true);
  mkdirSync(workDir, { recursive: true });
  const startedAt = performance.now();
  const progress = progressReporter();
  const quick = cli.quick === true;
  if ((quick || only) && cli.readme) throw new Error('--readme records a full run: leave out --quick and --only');
  const bundles = await buildBundles(projectRoot, join(workDir, 'bundles'), progress);
  const run: BenchRun = {
    quick,
    settings: quick ? quickSettings : fullSettings,
    bundle: (name) => {
      const found = bundles.get(name);
      if (!found) throw new Error(`no bundle ${name}`);
      return found;
    },
    rows: [],
    checks: [],
    notes: [],
    progress,
  };
  if (only) {
    await measureOnDynamoDbLocal(run);
    process.stdout.write(`\n${markdownTable(run.rows)}\n\n${run.checks.map(checkLine).join('\n')}\n`);
    return;
  }
  reportBundleSizes(run, projectRoot);
  // Cold starts first, before DynamoDB Local takes a core.
  await measureColdInit(run);
  await measureOnDynamoDbLocal(run);

  const totalSeconds = (performance.now() - startedAt) / 1000;
  const machine = `nproc ${nproc()}, CPU ${cpus()[0]?.model.trim() ?? 'unknown'}, Node.js ${process.version}, ${process.platform}/${process.arch}`;
  const latestFile = writeResults(run, {
    resultsDir,
    workDir,
    totalSeconds,
    machine,
    cores: nproc(),
    readme: cli.readme ? join(projectRoot, 'README.md') : undefined,
  });
  process.stdout.write(`Wrote ${relative(projectRoot, latestFile)} and its chart in ${Math.round(totalSeconds)} s.\n`);
}

function nproc(): string {
  try {
    return execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    return String(cpus().length);
  }
}

main().then(
  // SDK clients of the imported bundles keep sockets and timers: end here.
  () => process.exit(0),
  (error: unknown) => {
    restoreStdout();
    console.error(error);
    process.exit(1);
  },
);
