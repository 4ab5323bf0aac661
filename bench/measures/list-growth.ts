import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { lambdaContext, restProxyEvent } from '../../test/support/api-gateway-events';
import { createTables, loadPets } from '../support/dynamodb';
import { requests } from '../support/events';
import { benchTableNames } from '../support/lambda-environment';
import { type Contender, measureInterleaved, type ProxyHandler } from '../support/measure';
import { formatRatio } from '../support/report';
import { type BenchRun, fmt, ratioTarget } from '../support/run-context';
import { summarize } from '../support/stats';
import { loadBundle, SMALL_LIST } from './warm';

/** listPets latency must not grow with the table: 100 pets against `largeList` pets, interleaved. */
export async function measureListGrowth(run: BenchRun, endpoint: string, admin: DynamoDBDocumentClient): Promise<void> {
  const { largeList, listIterations, warmup } = run.settings;
  const largeLabel = largeList.toLocaleString('en-US');
  run.progress(`list latency: loading ${SMALL_LIST} and ${largeLabel} pets with BatchWriteItem`);
  const smallTables = await createTables(endpoint, 'bench-list-small');
  const largeTables = await createTables(endpoint, 'bench-list-large');
  await loadPets(admin, smallTables.pets, SMALL_LIST);
  let reported = 0;
  await loadPets(admin, largeTables.pets, largeList, {
    concurrency: 8,
    onProgress: (written) => {
      if (written - reported < largeList / 5) return;
      reported = written;
      run.progress(`  ${written.toLocaleString('en-US')} pets written`);
    },
  });
  // The bundle reads its table name at import: one copy of the module per table.
  const listBundle = run.bundle('ours-listPets');
  process.env.PETS_TABLE_NAME = smallTables.pets;
  const smallList = await loadBundle(listBundle, 'pets=small');
  process.env.PETS_TABLE_NAME = largeTables.pets;
  const largeListModule = await loadBundle(listBundle, 'pets=large');
  process.env.PETS_TABLE_NAME = benchTableNames.pets;
  const contender = (id: string, handler: ProxyHandler): Contender => ({
    id,
    handler,
    next: () => ({ event: restProxyEvent(requests.listPets(`key_list_${id}`)), context: lambdaContext('ours-listPets') }),
    expectedStatus: 200,
  });
  run.progress(`  listPets (limit 20) at ${SMALL_LIST} and ${largeLabel} pets, ${listIterations} invocations each, interleaved`);
  const samples = await measureInterleaved([contender('small', smallList.handler), contender('large', largeListModule.handler)], {
    iterations: listIterations,
    warmup,
  });
  const small = summarize(samples.get('small') ?? []);
  const large = summarize(samples.get('large') ?? []);
  const growth = large.p50 / small.p50;
  run.rows.push({
    measure: `listPets p50 / p99 at ${SMALL_LIST} → ${largeLabel} pets (ms)`,
    ours: `${fmt.ms(small.p50)} / ${fmt.ms(small.p99)} → ${fmt.ms(large.p50)} / ${fmt.ms(large.p99)}`,
    plain: '—',
    express: '—',
    floor: '—',
    ratio: `${formatRatio(growth)} (${largeLabel} ÷ ${SMALL_LIST}, p50)`,
    target: '≤ 1.20×',
    met: ratioTarget(
      run,
      `listPets p50 at ${largeLabel} ÷ at ${SMALL_LIST} pets`,
      growth,
      1.2,
      `${fmt.ms(large.p50)} ms vs ${fmt.ms(small.p50)} ms`,
    ),
  });
}
