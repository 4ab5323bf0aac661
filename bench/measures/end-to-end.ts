import autocannon from 'autocannon';
import { CustomerTable, generateApiKey } from '../../functions/customers';
import { startLocalApi } from '../../local/local-api';
import { ENTERPRISE_LIMIT } from '../support/events';
import { benchTableNames } from '../support/lambda-environment';
import type { BenchRun } from '../support/run-context';

const CONNECTIONS = 10;

/** Requests per second and latency of the local gateway (authorizer, routing, real HTTP) in front of our handlers: a sanity figure. */
export async function measureEndToEnd(run: BenchRun, endpoint: string): Promise<void> {
  run.progress(
    `end to end: autocannon, ${CONNECTIONS} connections, ${run.settings.autocannonSeconds} s of GET /v1/pets/{id} and GET /v1/pets through the local gateway`,
  );
  let figures: string[];
  try {
    figures = await throughput(run, endpoint);
  } catch (error) {
    figures = ['failed (see the notes)'];
    run.notes.push(`The end-to-end run failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  run.rows.push({
    measure: `Local gateway end to end, ${CONNECTIONS} connections (autocannon)`,
    ours: figures.join('; '),
    plain: '—',
    express: '—',
    floor: '—',
    ratio: '—',
    target: 'sanity figure',
    met: '',
  });
}

async function throughput(run: BenchRun, endpoint: string): Promise<string[]> {
  const api = await startLocalApi({ dynamoEndpoint: endpoint, tableNames: benchTableNames });
  try {
    const { secret, record } = generateApiKey({
      plan: 'enterprise',
      owner: 'bench',
      customLimits: { perMinute: ENTERPRISE_LIMIT, perDay: ENTERPRISE_LIMIT },
      now: Date.now(),
    });
    await new CustomerTable(api.dependencies.db, benchTableNames).insert(record);
    const base = api.url.replace('//localhost:', '//127.0.0.1:');
    const figures: string[] = [];
    for (const [label, path] of [
      ['getPet', '/pets/42'],
      ['listPets', '/pets?limit=20'],
    ] as const) {
      const once = (duration: number) =>
        autocannon({ url: `${base}${path}`, connections: CONNECTIONS, duration, headers: { Authorization: `Bearer ${secret}` } });
      await once(1);
      const result = await once(run.settings.autocannonSeconds);
      const failures = result.non2xx + result.errors + result.timeouts;
      figures.push(
        `${label} ${Math.round(result.requests.average).toLocaleString('en-US')} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms${failures ? `, ${failures} failed` : ''}`,
      );
      if (failures > 0)
        run.notes.push(`End to end ${label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts.`);
    }
    return figures;
  } finally {
    // Let the answers still on their way finish before the gateway and DynamoDB Local go.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await api.close();
  }
}
