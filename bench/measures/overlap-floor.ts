import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { CounterTable, RateLimiter } from '../../functions/rate-limit';
import { createDocumentClient } from '../../functions/runtime/dependencies';
import { lambdaContext } from '../../test/support/api-gateway-events';
import { bundleName, type Operation } from '../support/contenders';
import { dummyCredentials } from '../support/dynamodb';
import { ENTERPRISE_LIMIT } from '../support/events';
import { benchTableNames } from '../support/lambda-environment';
import { type Contender, measureInterleaved } from '../support/measure';
import { formatRatio } from '../support/report';
import { type BenchRun, fmt } from '../support/run-context';
import { summarize } from '../support/stats';
import { type LoadedBundle, operationContender } from './warm';

/**
 * What this machine allows a counted read, with the SDK alone and no handler:
 * the operation's read alone, two of them sent together (what a second
 * request of any kind costs here), the limiter's count alone, and the read
 * and the count sent together, interleaved with the floor's and our handlers. No implementation
 * that counts each request before answering can be faster than its count
 * alone; and DynamoDB Local answers both requests on the cores the client
 * uses too, so the pair can take longer than the slower of the two, where on
 * DynamoDB each is a network round trip (see round-trips.ts).
 */
export async function measureOverlapFloor(run: BenchRun, endpoint: string, moduleOf: (name: string) => LoadedBundle): Promise<void> {
  const db = createDocumentClient({ endpoint, region: 'us-east-1', credentials: dummyCredentials });
  const counters = new CounterTable(db, benchTableNames.rateLimits);
  const limits = { perMinute: ENTERPRISE_LIMIT, perDay: ENTERPRISE_LIMIT };
  // The limiter's decision as a function instance makes it: a lease write, or a read when served from a lease.
  const limiter = new RateLimiter(counters);
  const count = (keyId: string) => limiter.admit({ keyId, customerId: keyId, limits: limits }, Date.now());
  // The floor handlers' requests (bench/baselines/floor).
  const reads: Record<'getPet' | 'listPets', (i: number) => Promise<unknown>> = {
    getPet: (i) => db.send(new GetCommand({ TableName: benchTableNames.pets, Key: { id: 1 + (i % 100) }, ConsistentRead: true })),
    listPets: () =>
      db.send(
        new QueryCommand({
          TableName: benchTableNames.pets,
          // The first page: the first block's shard of the list of all pets (functions/data/pet-layout.ts).
          IndexName: 'byListShard',
          KeyConditionExpression: 'listShard = :shard AND id > :afterId',
          ExpressionAttributeValues: { ':shard': '0', ':afterId': 0 },
          Limit: 21,
        }),
      ),
  };
  const { warmIterations: iterations, warmup } = run.settings;
  for (const op of ['getPet', 'listPets'] as const satisfies readonly Operation[]) {
    const read = reads[op];
    run.progress(`  raw SDK, ${op}: the read alone, two reads together, the count alone, read and count together; ${iterations} each`);
    const samples = await measureInterleaved(
      [
        rawContender('read', read),
        rawContender('read+read', (i) => Promise.all([read(i), read(i + 1)])),
        rawContender('count', () => count(`key_raw_count_${op}`)),
        rawContender('read+count', (i) => Promise.all([read(i), count(`key_raw_pair_${op}`)])),
        operationContender('floor', op, 'raw', moduleOf(bundleName('floor', op)).handler),
        operationContender('ours', op, 'raw', moduleOf(bundleName('ours', op)).handler),
      ],
      { iterations, warmup },
    );
    const p50 = (id: string) => summarize(samples.get(id) ?? []).p50;
    const [alone, twoReads, counted, together] = [p50('read'), p50('read+read'), p50('count'), p50('read+count')];
    const [floor, ours] = [p50(`floor:${op}`), p50(`ours:${op}`)];
    const [readName, readsName] = op === 'getPet' ? ['GetItem', 'GetItems'] : ['Query', 'Queries'];
    run.rows.push({
      measure: `${op} on DynamoDB Local, interleaved, p50 (ms): raw SDK ${readName} alone, two ${readsName} together, count alone, ${readName} ‖ count; handlers`,
      ours: `raw ${fmt.ms(alone)}, ${fmt.ms(twoReads)}, ${fmt.ms(counted)}, ${fmt.ms(together)}; ours ${fmt.ms(ours)}`,
      plain: '—',
      express: '—',
      floor: fmt.ms(floor),
      ratio: `two ${formatRatio(twoReads / alone)}, count ${formatRatio(counted / alone)}, pair ${formatRatio(together / alone)} ${readName}; ours ${formatRatio(ours / together)} pair, ${formatRatio(ours / floor)} floor`,
      target: 'what the machine allows',
      met: '',
    });
  }
  db.destroy();
}

function rawContender(id: string, call: (i: number) => Promise<unknown>): Contender {
  let i = 0;
  return {
    id,
    handler: async () => {
      await call(i++);
      return { statusCode: 200, body: '' };
    },
    next: () => ({ event: {} as never, context: lambdaContext(id) }),
    expectedStatus: 200,
  };
}
