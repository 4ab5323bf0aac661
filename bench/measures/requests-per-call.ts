import { createDocumentClient } from '../../functions/runtime/dependencies';
import { bundleName, implementations, operations } from '../support/contenders';
import { benchRegion, dummyCredentials } from '../support/dynamodb';
import { countingClient, RequestCounter } from '../support/dynamodb-requests';
import type { BenchRun } from '../support/run-context';
import { benchDependencies, type LoadedBundle, operationContender, tableLabels } from './warm';

/** The limiter's requests: its lease writes, and the reads of the key's counter item by requests served from a lease. */
const LIMITER = new Set(['UpdateItem rateLimits', 'GetItem rateLimits']);

function describe(counts: Map<string, number> | undefined): string {
  if (!counts) return '—';
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([kind, count]) =>
        `${count.toFixed(count % 1 === 0 ? 0 : 3)} ${kind.replace(' rateLimits', ' (limiter)').replace('UpdateItem pets', 'UpdateItem pets (id block)')}`,
    )
    .join(' + ');
}

/** Whether our operation sends only what it must: one read (+ the limiter's), or a PutItem with amortised id blocks. */
function check(run: BenchRun, op: string, counts: Map<string, number>): { met: boolean; target: string } {
  const others = [...counts].filter(([kind]) => !LIMITER.has(kind));
  if (op === 'createPet') {
    const idBlocks = counts.get('UpdateItem pets') ?? 0;
    const met =
      idBlocks <= 0.05 &&
      counts.get('PutItem pets') === 1 &&
      others.every(([kind]) => kind === 'UpdateItem pets' || kind === 'PutItem pets');
    run.checks.push({
      label: 'createPet: id allocation per create',
      met,
      detail: `${idBlocks.toFixed(3)} UpdateItem per create (≤ 0.05), 1 PutItem`,
    });
    return { met, target: 'id allocation ≤ 0.05 per create' };
  }
  if (op === 'listPets') {
    // A page in one block is one Query; the view of which blocks exist is one GetItem (a copy of the block counter)
    // per instance per 10 s; sealed first pages come from the instance's cache (functions/domain/list-views.ts).
    const queries = counts.get('Query pets') ?? 0;
    const frontier = counts.get('GetItem pets') ?? 0;
    const met = queries <= 1.2 && frontier <= 0.05 && others.every(([kind]) => kind === 'Query pets' || kind === 'GetItem pets');
    run.checks.push({ label: `${op}: DynamoDB requests`, met, detail: describe(counts) });
    return { met, target: "≤ 1.2 Query, ≤ 0.05 GetItem + the limiter's" };
  }
  const wanted = 'GetItem pets';
  const met = others.length === 1 && others[0]?.[0] === wanted && others[0]?.[1] === 1;
  run.checks.push({ label: `${op}: DynamoDB requests`, met, detail: describe(counts) });
  return { met, target: `1 ${wanted.split(' ')[0]} + the limiter's` };
}

/** DynamoDB requests per API request, each send() counted on its way to DynamoDB Local. */
export async function measureRequestsPerCall(run: BenchRun, endpoint: string, moduleOf: (name: string) => LoadedBundle): Promise<void> {
  const n = run.settings.countedRequests;
  run.progress(`DynamoDB requests per API request: ${n} requests per contender, each send() counted`);
  const perRequest = new Map<string, Map<string, number>>();
  for (const op of operations) {
    for (const impl of implementations) {
      const counter = new RequestCounter(tableLabels);
      const client = createDocumentClient({ endpoint, region: benchRegion, credentials: dummyCredentials, budget: 'sdk-defaults' });
      const db = countingClient(client, counter);
      const contender = operationContender(impl, op, 'count', moduleOf(bundleName(impl, op)).createHandler(benchDependencies(db)));
      for (let i = 0; i < n; i++) {
        const { event, context } = contender.next(i);
        const result = await contender.handler(event, context);
        if (result.statusCode !== contender.expectedStatus)
          throw new Error(`${contender.id} answered ${result.statusCode}: ${result.body}`);
      }
      perRequest.set(contender.id, new Map([...counter.counts].map(([kind, count]) => [kind, count / n])));
      db.destroy();
    }
  }
  limiterWriteUnitsRow(run, perRequest);
  for (const op of operations) {
    const { met, target } = check(run, op, perRequest.get(`ours:${op}`) ?? new Map());
    run.rows.push({
      measure: `DynamoDB requests per API request, ${op} (counted)`,
      ours: describe(perRequest.get(`ours:${op}`)),
      plain: describe(perRequest.get(`plain:${op}`)),
      express: describe(perRequest.get(`express:${op}`)),
      floor: describe(perRequest.get(`floor:${op}`)),
      ratio: '—',
      target,
      met: met ? 'yes' : 'NO',
    });
  }
}

/**
 * The limiter's write units per request: its lease writes per request, one
 * write unit each (the counter item stays under 1 KB:
 * test/integration/limiter-write-units.test.ts). One key on one instance here;
 * the capacity model charges the measured 20-instance spread.
 */
function limiterWriteUnitsRow(run: BenchRun, perRequest: Map<string, Map<string, number>>): void {
  const writes = operations.map((op) => perRequest.get(`ours:${op}`)?.get('UpdateItem rateLimits') ?? 0);
  const perRequestUnits = writes.reduce((sum, units) => sum + units, 0) / operations.length;
  const met = perRequestUnits <= 0.3;
  run.checks.push({ label: "limiter's write units per request", met, detail: `${perRequestUnits.toFixed(3)} (≤ 0.3)` });
  run.rows.push({
    measure: "limiter's write units per request (lease writes, 1 unit each)",
    ours: operations.map((op, index) => `${op} ${(writes[index] ?? 0).toFixed(3)}`).join(', '),
    plain: '—',
    express: '—',
    floor: '—',
    ratio: '—',
    target: '≤ 0.3',
    met: met ? 'yes' : 'NO',
  });
}
