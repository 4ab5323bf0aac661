import { pathToFileURL } from 'node:url';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../functions/runtime/dependencies';
import { lambdaContext, restProxyEvent } from '../../test/support/api-gateway-events';
import type { BuiltBundle } from '../support/bundling';
import { bundleName, expectedStatus, type Implementation, implementations, type Operation, operations } from '../support/contenders';
import { benchRegion, dummyCredentials } from '../support/dynamodb';
import { RequestCounter, stubClient } from '../support/dynamodb-requests';
import { requests } from '../support/events';
import { benchTableNames } from '../support/lambda-environment';
import { type Contender, measureInterleaved, type ProxyHandler } from '../support/measure';
import { formatRatio } from '../support/report';
import { type BenchRun, fmt, ratioTarget } from '../support/run-context';
import { type Summary, summarize } from '../support/stats';

export const SMALL_LIST = 100;

export interface LoadedBundle {
  handler: ProxyHandler;
  createHandler: (dependencies: unknown) => ProxyHandler;
}

/** Imports a bundle as Lambda does; `instance` makes a second, separate copy of its module state. */
export async function loadBundle(bundle: BuiltBundle, instance = ''): Promise<LoadedBundle> {
  const module = (await import(`${pathToFileURL(bundle.file).href}${instance ? `?${instance}` : ''}`)) as Partial<LoadedBundle>;
  if (typeof module.handler !== 'function' || typeof module.createHandler !== 'function')
    throw new Error(`${bundle.name} does not export handler and createHandler`);
  return module as LoadedBundle;
}

/** What every contender's createHandler takes (the baselines read only db and tableNames). */
export function benchDependencies(db: DynamoDBDocumentClient) {
  return { db, tableNames: benchTableNames, clock: () => Date.now() };
}

export const tableLabels = Object.fromEntries(Object.entries(benchTableNames).map(([label, name]) => [name, label]));

function eventFor(op: Operation, keyId: string, i: number) {
  if (op === 'getPet') return restProxyEvent(requests.getPet(keyId, 1 + (i % SMALL_LIST)));
  return restProxyEvent(op === 'createPet' ? requests.createPet(keyId, i) : requests.listPets(keyId));
}

/** One implementation of an operation as a contender; each counts its requests under a key of its own. */
export function operationContender(impl: Implementation, op: Operation, phase: string, handler: ProxyHandler): Contender {
  const keyId = `key_${phase}_${impl}_${op}`;
  return {
    id: `${impl}:${op}`,
    handler,
    next: (i) => ({ event: eventFor(op, keyId, i), context: lambdaContext(bundleName(impl, op)) }),
    expectedStatus: expectedStatus[op],
  };
}

/** Latency of every implementation of each operation, interleaved within the operation. */
async function summaries(
  run: BenchRun,
  phase: string,
  makeHandler: (impl: Implementation, op: Operation) => ProxyHandler,
): Promise<Map<string, Summary>> {
  const result = new Map<string, Summary>();
  const { warmIterations: iterations, warmup } = run.settings;
  for (const op of operations) {
    run.progress(`  ${op}: ${implementations.join(', ')} — ${iterations} invocations each after ${warmup} unmeasured`);
    const samples = await measureInterleaved(
      implementations.map((impl) => operationContender(impl, op, phase, makeHandler(impl, op))),
      { iterations, warmup },
    );
    for (const [id, values] of samples) result.set(id, summarize(values));
  }
  return result;
}

/** Warm, in process, against a stubbed client: the time our code adds, with no I/O. */
export async function measureWarmStubbed(run: BenchRun, moduleOf: (name: string) => LoadedBundle): Promise<void> {
  run.progress('warm latency in process against a stubbed DynamoDB client (createHandler with a stub)');
  const counter = new RequestCounter(tableLabels);
  const stubbed = await summaries(run, 'stub', (impl, op) => {
    const db = stubClient(
      createDocumentClient({ region: benchRegion, credentials: dummyCredentials, budget: 'sdk-defaults' }),
      counter,
      benchTableNames,
    );
    return moduleOf(bundleName(impl, op)).createHandler(benchDependencies(db));
  });
  for (const op of operations) {
    const [ours, plain, express, floor] = implementations.map((impl) => stubbed.get(`${impl}:${op}`) as Summary) as [
      Summary,
      Summary,
      Summary,
      Summary,
    ];
    const cell = (summary: Summary) => `${fmt.us(summary.p50)} / ${fmt.us(summary.p99)}`;
    const vsExpress = ours.p50 / express.p50;
    run.rows.push({
      measure: `Warm, stubbed client, ${op}: p50 / p99 (µs)`,
      ours: cell(ours),
      plain: cell(plain),
      express: cell(express),
      floor: cell(floor),
      ratio: `${formatRatio(ours.p50 / plain.p50)} plain, ${formatRatio(vsExpress)} Express (p50)`,
      target: '≤ 0.50× Express',
      met: ratioTarget(
        run,
        `warm overhead (stub) ${op} ÷ Express`,
        vsExpress,
        0.5,
        `p50 ${fmt.us(ours.p50)} µs vs ${fmt.us(express.p50)} µs`,
      ),
    });
  }
}

/**
 * Warm against DynamoDB Local: the bundled `handler`, configured at import from
 * the environment as in Lambda. Reads are held to the floor (one round trip of
 * wall time), createPet to the plain create, which also counts the request first.
 */
export async function measureWarmOnDynamoDbLocal(run: BenchRun, moduleOf: (name: string) => LoadedBundle): Promise<void> {
  run.progress('warm latency against DynamoDB Local (the bundled handler, configured from the environment)');
  const local = await summaries(run, 'local', (impl, op) => moduleOf(bundleName(impl, op)).handler);
  for (const op of operations) {
    const [ours, plain, express, floor] = implementations.map((impl) => local.get(`${impl}:${op}`) as Summary) as [
      Summary,
      Summary,
      Summary,
      Summary,
    ];
    const cell = (summary: Summary) => `${fmt.ms(summary.p50)} / ${fmt.ms(summary.p99)}`;
    const [baseline, name, limit] = op === 'createPet' ? [plain, 'plain', 1.15] : [floor, 'floor', 1.2];
    const ratio = ours.p50 / baseline.p50;
    run.rows.push({
      measure: `Warm, DynamoDB Local, ${op}: p50 / p99 (ms)`,
      ours: cell(ours),
      plain: cell(plain),
      express: cell(express),
      floor: cell(floor),
      ratio: `${formatRatio(ours.p50 / plain.p50)} plain, ${formatRatio(ours.p50 / express.p50)} Express, ${formatRatio(ours.p50 / floor.p50)} floor (p50)`,
      target: `≤ ${formatRatio(limit)} ${name}`,
      met: ratioTarget(
        run,
        `warm on DynamoDB Local ${op} ÷ ${name}`,
        ratio,
        limit,
        `p50 ${fmt.ms(ours.p50)} ms vs ${fmt.ms(baseline.p50)} ms`,
      ),
    });
  }
}
