/**
 * `npm run bench [-- --quick]`: performance evidence, our Lambda functions side
 * by side with what a team would write instead, measured in one run so that
 * ratios hold on a noisy shared machine.
 *
 * Contenders, all bundled with the CDK stack's esbuild options:
 *   ours     the route table's handler entries (functions/…/handler.ts);
 *   plain    (a) bench/baselines/plain: one plain handler per route, no framework;
 *   express  (b) bench/baselines/express: one Express app behind @vendia/serverless-express.
 * The baselines implement the same contract for GET one pet and POST a pet
 * with the same DynamoDB work per request (see bench/baselines/common).
 *
 * Measures: bundle size; cold init in fresh `node` processes; warm latency in
 * process against a stubbed DynamoDB client (our own overhead) and against
 * DynamoDB Local; DynamoDB requests per API request; list latency at 100 vs
 * 100,000 pets; end-to-end throughput of the local gateway with autocannon.
 * Writes bench/results/latest.md and bench/results/ratios.svg (a --quick smoke
 * run writes under bench/results/tmp/ instead); --readme-section <file> also
 * writes the README's Performance section. Traffic goes to 127.0.0.1 only.
 */
import { benchTableNames, lambdaProcessEnvironment, tableEnvironment } from './support/lambda-environment';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import { Command } from 'commander';
import { routes } from '../definitions/routes';
import { ApiKeyRepository } from '../functions/data/api-key-repository';
import { generateApiKey } from '../functions/domain/api-keys';
import { assertJavaAvailable, type RunningDynamoDb, startDynamoDbLocal } from '../local/dynamodb-local';
import { startLocalApi } from '../local/local-api';
import { type BuiltBundle, bundleFunction, bytesByPackage, cdkOutAssetHashes } from './support/bundling';
import { RequestCounter, countingClient, stubClient } from './support/dynamodb-requests';
import { adminClient, benchRegion, createTables, dummyCredentials, loadPets } from './support/dynamodb';
import { ENTERPRISE_LIMIT, lambdaContext, requests, restProxyEvent } from './support/events';
import { type Contender, coldInitOnce, measureInterleaved, type ProxyHandler } from './support/measure';
import { formatRatio, markdownTable, type Row, ratiosSvg, type TargetCheck } from './support/report';
import { median, type Summary, summarize } from './support/stats';

const projectRoot = join(__dirname, '..');
const resultsDir = join(__dirname, 'results');
const workDir = join(resultsDir, 'tmp');

const cli = new Command()
  .description('Benchmark our Lambda functions against a plain-handler and an Express baseline.')
  .option('--quick', 'a short smoke run (fewer processes and invocations, 10,000 pets instead of 100,000) that writes to bench/results/tmp/, not the recorded results')
  .option('--readme-section <file>', "also write the README's Performance section, with this run's table, to this file")
  .parse()
  .opts<{ quick?: boolean; readmeSection?: string }>();
const quick = cli.quick === true;
const settings = quick
  ? { coldRuns: 5, warmIterations: 300, warmup: 50, countedRequests: 200, largeList: 10_000, listIterations: 300, autocannonSeconds: 3 }
  : { coldRuns: 31, warmIterations: 2_000, warmup: 200, countedRequests: 500, largeList: 100_000, listIterations: 2_000, autocannonSeconds: 10 };
const SMALL_LIST = 100;
const CONNECTIONS = 10;

type Implementation = 'ours' | 'plain' | 'express';
type Operation = 'getPet' | 'createPet' | 'listPets';

/** Every contender of the warm runs: an implementation of an operation and its bundle. */
const contenders: { impl: Implementation; op: Operation; bundle: string }[] = [
  { impl: 'ours', op: 'getPet', bundle: 'ours-getPet' },
  { impl: 'plain', op: 'getPet', bundle: 'plain-getPet' },
  { impl: 'express', op: 'getPet', bundle: 'express' },
  { impl: 'ours', op: 'createPet', bundle: 'ours-createPet' },
  { impl: 'plain', op: 'createPet', bundle: 'plain-createPet' },
  { impl: 'express', op: 'createPet', bundle: 'express' },
  { impl: 'ours', op: 'listPets', bundle: 'ours-listPets' },
];

/** The baseline a function of ours is compared with: listPets has none of its own, so the plain GET one pet stands in for init and size. */
const plainFor: Record<Operation, string> = { getPet: 'plain-getPet', createPet: 'plain-createPet', listPets: 'plain-getPet' };
const expectedStatus: Record<Operation, number> = { getPet: 200, createPet: 201, listPets: 200 };

const startedAt = performance.now();
function progress(message: string): void {
  const seconds = Math.round((performance.now() - startedAt) / 1000);
  process.stderr.write(`[bench ${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}] ${message}\n`);
}

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

interface LoadedBundle {
  handler: ProxyHandler;
  createHandler: (dependencies: unknown) => ProxyHandler;
}

async function loadBundle(bundle: BuiltBundle, instance = ''): Promise<LoadedBundle> {
  const module = (await import(`${pathToFileURL(bundle.file).href}${instance ? `?${instance}` : ''}`)) as Partial<LoadedBundle>;
  if (typeof module.handler !== 'function' || typeof module.createHandler !== 'function') throw new Error(`${bundle.name} does not export handler and createHandler`);
  return module as LoadedBundle;
}

const fmt = {
  bytes: (value: number) => `${Math.round(value / 1024).toLocaleString('en-US')} KiB`,
  ms: (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)),
  us: (value: number) => (value * 1000).toFixed(0),
};

async function main(): Promise<void> {
  // DynamoDB Local needs Java: say so now rather than after the cold starts.
  assertJavaAvailable();
  // As NODE_OPTIONS=--enable-source-maps does in our functions' environment.
  process.setSourceMapsEnabled(true);
  mkdirSync(workDir, { recursive: true });
  const checks: TargetCheck[] = [];
  const rows: Row[] = [];
  const notes: string[] = [];

  // 1. Bundles, exactly as the CDK stack builds them.
  progress(`building ${routes.length + 3} bundles with the CDK stack's esbuild options${quick ? ' (quick run)' : ''}`);
  const bundleDir = join(workDir, 'bundles');
  const bundles = new Map<string, BuiltBundle>();
  const entries: [string, string][] = [
    ...routes.map((route): [string, string] => [`ours-${route.operationId}`, route.handlerEntry]),
    ['plain-getPet', 'bench/baselines/plain/get-pet.ts'],
    ['plain-createPet', 'bench/baselines/plain/create-pet.ts'],
    ['express', 'bench/baselines/express/handler.ts'],
  ];
  for (const [name, entry] of entries) bundles.set(name, await bundleFunction({ name, entry, projectRoot, outDir: bundleDir }));
  const bundle = (name: string) => {
    const found = bundles.get(name);
    if (!found) throw new Error(`no bundle ${name}`);
    return found;
  };
  const cdkAssets = cdkOutAssetHashes(projectRoot);
  const identical = routes.filter((route) => cdkAssets.has(bundle(`ours-${route.operationId}`).sha256));
  notes.push(
    identical.length === routes.length
      ? 'Our bundles are byte-identical to the Lambda assets of the last `cdk synth` (cdk.out).'
      : `${identical.length} of ${routes.length} of our bundles are byte-identical to a cdk.out asset (cdk.out is missing or older than the sources; the esbuild options are a copy of lib/constructs/operation-function.ts).`,
  );

  const ops: Operation[] = ['getPet', 'createPet', 'listPets'];
  for (const op of ops) {
    const ours = bundle(`ours-${op}`);
    const plain = bundle(plainFor[op]);
    const express = bundle('express');
    rows.push({
      measure: `Bundle ${op}, minified (gzip)${op === 'listPets' ? ' ¹' : ''}`,
      ours: `${fmt.bytes(ours.bytes)} (${fmt.bytes(ours.gzipBytes)})`,
      plain: `${fmt.bytes(plain.bytes)} (${fmt.bytes(plain.gzipBytes)})`,
      express: `${fmt.bytes(express.bytes)} (${fmt.bytes(express.gzipBytes)})`,
      ratio: `${formatRatio(ours.bytes / plain.bytes)} plain, ${formatRatio(ours.bytes / express.bytes)} Express`,
      target: '—',
      met: '',
    });
  }

  // 2. Cold init: fresh processes, before DynamoDB Local takes a core.
  const probe = join(__dirname, 'support', 'cold-init-probe.mjs');
  const coldNames = ['ours-getPet', 'ours-createPet', 'ours-listPets', 'plain-getPet', 'plain-createPet', 'express'];
  const cold = new Map<string, number[]>(coldNames.map((name) => [name, []]));
  const coldCpu = new Map<string, number[]>(coldNames.map((name) => [name, []]));
  progress(`cold init: ${settings.coldRuns} fresh node processes per bundle, ${coldNames.length} bundles, interleaved`);
  for (let run = 0; run < settings.coldRuns; run++) {
    for (let k = 0; k < coldNames.length; k++) {
      const name = coldNames[(run + k) % coldNames.length] as string;
      const sample = await coldInitOnce(probe, bundle(name).file, lambdaProcessEnvironment(name));
      cold.get(name)?.push(sample.initMs);
      coldCpu.get(name)?.push(sample.cpuMs);
    }
    if ((run + 1) % 5 === 0 || run + 1 === settings.coldRuns) progress(`  cold init ${run + 1}/${settings.coldRuns} rounds`);
  }
  const coldMedian = (name: string) => median(cold.get(name) ?? []);
  const cpuMedian = (name: string) => median(coldCpu.get(name) ?? []);
  const coldCell = (name: string) => `${fmt.ms(coldMedian(name))} (CPU ${fmt.ms(cpuMedian(name))})`;
  for (const op of ops) {
    const ours = coldMedian(`ours-${op}`);
    const plain = coldMedian(plainFor[op]);
    const express = coldMedian('express');
    const vsPlain = ours / plain;
    const vsExpress = ours / express;
    const cpuRatios = (baseline: string) => `CPU time ${formatRatio(cpuMedian(`ours-${op}`) / cpuMedian(baseline))}`;
    checks.push(
      { label: `cold init ${op} ÷ plain`, ratio: vsPlain, limit: 1.1, met: vsPlain <= 1.1, detail: `${fmt.ms(ours)} ms vs ${fmt.ms(plain)} ms (${cpuRatios(plainFor[op])})` },
      { label: `cold init ${op} ÷ Express`, ratio: vsExpress, limit: 0.65, met: vsExpress <= 0.65, detail: `${fmt.ms(ours)} ms vs ${fmt.ms(express)} ms (${cpuRatios('express')})` },
    );
    rows.push({
      measure: `Cold init ${op}, median of ${settings.coldRuns} processes: wall (CPU) ms${op === 'listPets' ? ' ¹' : ''}`,
      ours: coldCell(`ours-${op}`),
      plain: coldCell(plainFor[op]),
      express: coldCell('express'),
      ratio: `${formatRatio(vsPlain)} plain, ${formatRatio(vsExpress)} Express`,
      target: '≤ 1.10× plain, ≤ 0.65× Express',
      met: `${vsPlain <= 1.1 ? 'yes' : 'NO'}, ${vsExpress <= 0.65 ? 'yes' : 'NO'}`,
    });
  }

  // 3. DynamoDB Local, the service's tables, 100 pets to read.
  progress('starting DynamoDB Local (in memory) and creating the tables');
  let dynamo: RunningDynamoDb | undefined = await startDynamoDbLocal();
  try {
    const endpoint = dynamo.endpoint;
    progress(`DynamoDB Local answers at ${endpoint}`);
    await createTables(endpoint, 'bench');
    const admin = adminClient(endpoint);
    await loadPets(admin, benchTableNames.pets, SMALL_LIST);
    // The bundled handlers read these at import, as in Lambda.
    process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
    Object.assign(process.env, tableEnvironment(benchTableNames));
    swallowStdout();
    progress('importing the bundles (their handlers connect to DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB)');

    const loaded = new Map<string, LoadedBundle>();
    for (const name of new Set(contenders.map((contender) => contender.bundle))) loaded.set(name, await loadBundle(bundle(name)));
    const moduleOf = (name: string) => loaded.get(name) as LoadedBundle;

    const tableLabels = Object.fromEntries(Object.entries(benchTableNames).map(([label, name]) => [name, label]));
    const dependenciesFor = (impl: Implementation, db: DynamoDBDocumentClient) =>
      impl === 'ours' ? { db, tableNames: benchTableNames, clock: () => Date.now() } : { db, tableNames: { pets: benchTableNames.pets, rateLimits: benchTableNames.rateLimits } };
    const eventFor = (op: Operation, keyId: string, i: number) =>
      op === 'getPet' ? restProxyEvent(requests.getPet(keyId, 1 + (i % SMALL_LIST))) : op === 'createPet' ? restProxyEvent(requests.createPet(keyId, i)) : restProxyEvent(requests.listPets(keyId));
    const contenderFor = (entry: (typeof contenders)[number], phase: string, handler: ProxyHandler): Contender => {
      const keyId = `key_${phase}_${entry.impl}_${entry.op}`;
      return {
        id: `${entry.impl}:${entry.op}`,
        handler,
        next: (i) => ({ event: eventFor(entry.op, keyId, i), context: lambdaContext(entry.bundle) }),
        expectedStatus: expectedStatus[entry.op],
      };
    };
    const summaries = async (phase: string, makeHandler: (entry: (typeof contenders)[number]) => ProxyHandler) => {
      const result = new Map<string, Summary>();
      for (const op of ops) {
        const group = contenders.filter((entry) => entry.op === op);
        progress(`  ${op}: ${group.map((entry) => entry.impl).join(', ')} — ${settings.warmIterations} invocations each after ${settings.warmup} unmeasured`);
        let quarter = 0;
        const samples = await measureInterleaved(
          group.map((entry) => contenderFor(entry, phase, makeHandler(entry))),
          {
            iterations: settings.warmIterations,
            warmup: settings.warmup,
            onProgress: (done, total) => {
              if (Math.floor((done / total) * 4) > quarter) {
                quarter = Math.floor((done / total) * 4);
                progress(`    ${quarter * 25}%`);
              }
            },
          },
        );
        for (const [id, values] of samples) result.set(id, summarize(values));
      }
      return result;
    };

    // 4. Warm, in process, against a stubbed client: our own overhead.
    progress('warm latency in process against a stubbed DynamoDB client (createHandler with a stub)');
    const stubCounter = new RequestCounter(tableLabels);
    const stubbed = await summaries('stub', (entry) => {
      const db = stubClient(DynamoDBDocumentClient.from(new DynamoDBClient({ region: benchRegion, credentials: dummyCredentials })), stubCounter, benchTableNames);
      return moduleOf(entry.bundle).createHandler(dependenciesFor(entry.impl, db));
    });

    // 5. Warm against DynamoDB Local: the bundled `handler`, built at import from the environment.
    progress('warm latency against DynamoDB Local (the bundled handler, configured from the environment)');
    const local = await summaries('local', (entry) => moduleOf(entry.bundle).handler);

    for (const op of ['getPet', 'createPet', 'listPets'] as const) {
      const ours = stubbed.get(`ours:${op}`) as Summary;
      const plain = stubbed.get(`plain:${op}`);
      const express = stubbed.get(`express:${op}`);
      const vsExpress = express ? ours.p50 / express.p50 : undefined;
      if (vsExpress !== undefined) {
        checks.push({ label: `warm overhead (stub) ${op} ÷ Express`, ratio: vsExpress, limit: 0.5, met: vsExpress <= 0.5, detail: `p50 ${fmt.us(ours.p50)} µs vs ${fmt.us(express?.p50 ?? 0)} µs` });
      }
      rows.push({
        measure: `Warm, stubbed client, ${op}: p50 / p99 (µs)`,
        ours: `${fmt.us(ours.p50)} / ${fmt.us(ours.p99)}`,
        plain: plain ? `${fmt.us(plain.p50)} / ${fmt.us(plain.p99)}` : '—',
        express: express ? `${fmt.us(express.p50)} / ${fmt.us(express.p99)}` : '—',
        ratio: plain && express ? `${formatRatio(ours.p50 / plain.p50)} plain, ${formatRatio(vsExpress as number)} Express (p50)` : '—',
        target: vsExpress !== undefined ? '≤ 0.50× Express' : '—',
        met: vsExpress !== undefined ? (vsExpress <= 0.5 ? 'yes' : 'NO') : '',
      });
    }
    for (const op of ['getPet', 'createPet', 'listPets'] as const) {
      const ours = local.get(`ours:${op}`) as Summary;
      const plain = local.get(`plain:${op}`);
      const express = local.get(`express:${op}`);
      const vsPlain = plain ? ours.p50 / plain.p50 : undefined;
      if (vsPlain !== undefined) {
        checks.push({ label: `warm on DynamoDB Local ${op} ÷ plain`, ratio: vsPlain, limit: 1.3, met: vsPlain <= 1.3, detail: `p50 ${fmt.ms(ours.p50)} ms vs ${fmt.ms(plain?.p50 ?? 0)} ms` });
      }
      rows.push({
        measure: `Warm, DynamoDB Local, ${op}: p50 / p99 (ms)`,
        ours: `${fmt.ms(ours.p50)} / ${fmt.ms(ours.p99)}`,
        plain: plain ? `${fmt.ms(plain.p50)} / ${fmt.ms(plain.p99)}` : '—',
        express: express ? `${fmt.ms(express.p50)} / ${fmt.ms(express.p99)}` : '—',
        ratio: plain && express ? `${formatRatio(vsPlain as number)} plain, ${formatRatio(ours.p50 / express.p50)} Express (p50)` : '—',
        target: vsPlain !== undefined ? '≤ 1.30× plain' : '—',
        met: vsPlain !== undefined ? (vsPlain <= 1.3 ? 'yes' : 'NO') : '',
      });
    }

    // 6. DynamoDB requests per API request, counted on the way to DynamoDB Local.
    progress(`DynamoDB requests per API request: ${settings.countedRequests} requests per contender, each send() counted`);
    const perRequest = new Map<string, Map<string, number>>();
    for (const entry of contenders) {
      const counter = new RequestCounter(tableLabels);
      const db = countingClient(
        DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint, region: benchRegion, credentials: dummyCredentials }), { marshallOptions: { removeUndefinedValues: true } }),
        counter,
      );
      const contender = contenderFor(entry, 'count', moduleOf(entry.bundle).createHandler(dependenciesFor(entry.impl, db)));
      for (let i = 0; i < settings.countedRequests; i++) {
        const { event, context } = contender.next(i);
        const result = await contender.handler(event, context);
        if (result.statusCode !== contender.expectedStatus) throw new Error(`${contender.id} answered ${result.statusCode}: ${result.body}`);
      }
      perRequest.set(contender.id, new Map([...counter.counts].map(([kind, count]) => [kind, count / settings.countedRequests])));
      db.destroy();
    }
    const describe = (counts: Map<string, number> | undefined) =>
      counts
        ? [...counts]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([kind, count]) => `${count.toFixed(count % 1 === 0 ? 0 : 3)} ${kind.replace(' rateLimits', ' (limiter)').replace('UpdateItem pets', 'UpdateItem pets (id block)')}`)
            .join(' + ')
        : '—';
    const limiterKey = 'UpdateItem rateLimits';
    for (const op of ops) {
      const counts = perRequest.get(`ours:${op}`) ?? new Map<string, number>();
      const others = [...counts].filter(([kind]) => kind !== limiterKey);
      let met: boolean;
      let target: string;
      if (op === 'createPet') {
        const idBlocks = counts.get('UpdateItem pets') ?? 0;
        met = idBlocks <= 0.05 && counts.get('PutItem pets') === 1 && others.every(([kind]) => kind === 'UpdateItem pets' || kind === 'PutItem pets');
        target = 'id allocation ≤ 0.05 per create';
        checks.push({ label: 'createPet: id allocation per create', met, detail: `${idBlocks.toFixed(3)} UpdateItem per create (≤ 0.05), 1 PutItem` });
      } else {
        const wanted = op === 'getPet' ? 'GetItem pets' : 'Query pets';
        met = others.length === 1 && others[0]?.[0] === wanted && others[0]?.[1] === 1;
        target = `1 ${wanted.split(' ')[0]} + the limiter's`;
        checks.push({ label: `${op}: DynamoDB requests`, met, detail: describe(counts) });
      }
      rows.push({
        measure: `DynamoDB requests per API request, ${op} (counted)`,
        ours: describe(counts),
        plain: describe(perRequest.get(`plain:${op}`)),
        express: describe(perRequest.get(`express:${op}`)),
        ratio: '—',
        target,
        met: met ? 'yes' : 'NO',
      });
    }

    // 7. List latency does not grow with the table.
    progress(`list latency: loading ${SMALL_LIST} and ${settings.largeList.toLocaleString('en-US')} pets with BatchWriteItem`);
    const smallTables = await createTables(endpoint, 'bench-list-small');
    const largeTables = await createTables(endpoint, 'bench-list-large');
    await loadPets(admin, smallTables.pets, SMALL_LIST);
    let reported = 0;
    await loadPets(admin, largeTables.pets, settings.largeList, {
      concurrency: 8,
      onProgress: (written) => {
        if (written - reported >= settings.largeList / 5) {
          reported = written;
          progress(`  ${written.toLocaleString('en-US')} pets written`);
        }
      },
    });
    const listBundle = bundle('ours-listPets');
    process.env.PETS_TABLE_NAME = smallTables.pets;
    const smallList = await loadBundle(listBundle, 'pets=small');
    process.env.PETS_TABLE_NAME = largeTables.pets;
    const largeList = await loadBundle(listBundle, 'pets=large');
    process.env.PETS_TABLE_NAME = benchTableNames.pets;
    const listContender = (id: string, handler: ProxyHandler): Contender => ({
      id,
      handler,
      next: () => ({ event: restProxyEvent(requests.listPets(`key_list_${id}`)), context: lambdaContext('ours-listPets') }),
      expectedStatus: 200,
    });
    progress(`  listPets (limit 20) at ${SMALL_LIST} and ${settings.largeList.toLocaleString('en-US')} pets, ${settings.listIterations} invocations each, interleaved`);
    const listSamples = await measureInterleaved([listContender('small', smallList.handler), listContender('large', largeList.handler)], {
      iterations: settings.listIterations,
      warmup: settings.warmup,
    });
    const small = summarize(listSamples.get('small') ?? []);
    const large = summarize(listSamples.get('large') ?? []);
    const growth = large.p50 / small.p50;
    const largeLabel = settings.largeList.toLocaleString('en-US');
    checks.push({ label: `listPets p50 at ${largeLabel} ÷ at ${SMALL_LIST} pets`, ratio: growth, limit: 1.2, met: growth <= 1.2, detail: `${fmt.ms(large.p50)} ms vs ${fmt.ms(small.p50)} ms` });
    rows.push({
      measure: `listPets p50 / p99 at ${SMALL_LIST} → ${largeLabel} pets (ms)`,
      ours: `${fmt.ms(small.p50)} / ${fmt.ms(small.p99)} → ${fmt.ms(large.p50)} / ${fmt.ms(large.p99)}`,
      plain: '—',
      express: '—',
      ratio: `${formatRatio(growth)} (${largeLabel} ÷ ${SMALL_LIST}, p50)`,
      target: '≤ 1.20×',
      met: growth <= 1.2 ? 'yes' : 'NO',
    });

    // 8. End to end through the local gateway (authorizer, routing, real HTTP), as a sanity figure.
    progress(`end to end: autocannon, ${CONNECTIONS} connections, ${settings.autocannonSeconds} s of GET /v1/pets/{id} and GET /v1/pets through the local gateway`);
    const endToEnd: string[] = [];
    try {
      endToEnd.push(...(await throughput(endpoint, notes)));
    } catch (error) {
      endToEnd.push('failed (see the notes)');
      notes.push(`The end-to-end run failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    rows.push({
      measure: `Local gateway end to end, ${CONNECTIONS} connections (autocannon)`,
      ours: endToEnd.join('; '),
      plain: '—',
      express: '—',
      ratio: '—',
      target: 'sanity figure',
      met: '',
    });
    admin.destroy();
  } finally {
    await dynamo?.stop();
    dynamo = undefined;
    restoreStdout();
  }

  // Report.
  const totalSeconds = (performance.now() - startedAt) / 1000;
  const command = `npm run bench${quick ? ' -- --quick' : ''}`;
  const machine = `nproc ${nproc()}, CPU ${cpus()[0]?.model.trim() ?? 'unknown'}, Node.js ${process.version}, ${process.platform}/${process.arch}`;
  const table = markdownTable(rows);
  const targetLines = checks.map((check) => `- ${check.met ? 'met' : 'MISSED'}: ${check.label}${check.ratio !== undefined ? ` = ${formatRatio(check.ratio)} (target ≤ ${formatRatio(check.limit ?? 0)})` : ''} — ${check.detail}`);
  const metCount = checks.filter((check) => check.met).length;
  const composition = ['ours-getPet', 'ours-createPet', 'ours-listPets', 'plain-getPet', 'plain-createPet', 'express'].map((name) => {
    const top = bytesByPackage(bundle(name).metafile).slice(0, 6);
    return `- ${name} (${fmt.bytes(bundle(name).bytes)}): ${top.map((entry) => `${entry.name} ${fmt.bytes(entry.bytes)}`).join(', ')}`;
  });
  const subtitle = `${command} · ${new Date().toISOString().slice(0, 10)} · ${nproc()} cores · Node.js ${process.version}`;
  const legend = [
    `Ours: the functions of the route table; (a) plain: one handler per route, no framework; (b) Express: one app for both routes behind @vendia/serverless-express.`,
    `All bundled with the CDK stack's esbuild options (ESM, minified, source maps, AWS SDK inside). The baselines do the same DynamoDB work per request (limiter, id blocks), so ratios measure code.`,
    `Cold init: import() of the bundle in a fresh node process with the function's environment (NODE_OPTIONS=--enable-source-maps, table names, region, dummy credentials), median.`,
    `Warm: sequential invocations with API Gateway REST proxy events carrying the authorizer context (an Enterprise key: the limiter counts every request, never refuses), interleaved in batches of 25.`,
    `¹ No list route in the baselines: listPets is set against the plain GET one pet function, the nearest read-only function.`,
  ];
  const markdown = [
    `# Benchmark results`,
    '',
    `Command: \`${command}\` · machine: ${machine} · ${new Date().toISOString()} · total ${Math.round(totalSeconds)} s.`,
    '',
    table,
    '',
    ...legend.map((line) => `${line}  `),
    '',
    `![Ratios of our functions to the baselines](ratios.svg)`,
    '',
    `## Targets: ${metCount} of ${checks.length} met`,
    '',
    ...targetLines,
    '',
    `## Bundle composition (esbuild metafile, bytes in the output)`,
    '',
    ...composition,
    '',
    ...(notes.length > 0 ? ['## Notes', '', ...notes.map((note) => `- ${note}`), ''] : []),
  ].join('\n');
  // A quick run is a smoke test: it leaves the recorded results alone.
  const outDir = quick ? workDir : resultsDir;
  const latestFile = join(outDir, quick ? 'latest-quick.md' : 'latest.md');
  writeFileSync(latestFile, markdown);
  writeFileSync(join(outDir, quick ? 'ratios-quick.svg' : 'ratios.svg'), ratiosSvg(checks, subtitle));
  const readmeSection = [
    '## Performance',
    '',
    `\`${command}\` (about ${Math.max(1, Math.round(totalSeconds / 60))} minutes; \`-- --quick\` for a smoke run) builds our functions and two baselines written in \`bench/\` —`,
    '(a) one plain handler per route, (b) one Express app behind `@vendia/serverless-express` — with the esbuild options of the CDK stack, and',
    'measures them side by side in one run, interleaved, so that the ratios hold on a busy machine. It needs Java (DynamoDB Local), like `npm test`.',
    `Results of the run below (${machine}):`,
    '',
    table,
    '',
    ...legend.map((line) => `${line}  `),
    '',
    '![Ratios of our functions to the baselines](bench/results/ratios.svg)',
    '',
    `Targets: ${metCount} of ${checks.length} met — details, bundle composition and notes in \`bench/results/latest.md\`.`,
    '',
  ].join('\n');
  if (cli.readmeSection) {
    mkdirSync(dirname(cli.readmeSection), { recursive: true });
    writeFileSync(cli.readmeSection, readmeSection);
  }

  process.stdout.write(`\n${table}\n\n${legend.join('\n')}\n\nTargets: ${metCount} of ${checks.length} met\n${targetLines.join('\n')}\n\n`);
  process.stdout.write(`Wrote ${relative(projectRoot, latestFile)} and its chart in ${Math.round(totalSeconds)} s.\n`);
}

/** Requests per second and latency of the local gateway (authorizer, routing, real HTTP) in front of our handlers. */
async function throughput(endpoint: string, notes: string[]): Promise<string[]> {
  const api = await startLocalApi({ dynamoEndpoint: endpoint, tableNames: benchTableNames });
  try {
    const { secret, record } = generateApiKey({ plan: 'enterprise', owner: 'bench', customLimits: { perMinute: ENTERPRISE_LIMIT, perDay: ENTERPRISE_LIMIT }, now: Date.now() });
    await new ApiKeyRepository(api.dependencies.db, benchTableNames.apiKeys).insert(record);
    const base = api.url.replace('//localhost:', '//127.0.0.1:');
    const figures: string[] = [];
    for (const [label, path] of [
      ['getPet', '/pets/42'],
      ['listPets', '/pets?limit=20'],
    ] as const) {
      const run = (duration: number) => autocannon({ url: `${base}${path}`, connections: CONNECTIONS, duration, headers: { Authorization: `Bearer ${secret}` } });
      await run(1);
      const result = await run(settings.autocannonSeconds);
      const failures = result.non2xx + result.errors + result.timeouts;
      figures.push(`${label} ${Math.round(result.requests.average).toLocaleString('en-US')} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms${failures ? `, ${failures} failed` : ''}`);
      if (failures > 0) notes.push(`End to end ${label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts.`);
    }
    return figures;
  } finally {
    // Let the answers still on their way finish before the gateway and DynamoDB Local go.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await api.close();
  }
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
