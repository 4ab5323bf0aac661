import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { RateLimitRepository } from '../../functions/data/rate-limit-repository';
import { windowsAt } from '../../functions/domain/rate-limit';
import { createDocumentClient } from '../../functions/runtime/dependencies';
import { bundleName } from '../support/contenders';
import { dummyCredentials } from '../support/dynamodb';
import { ENTERPRISE_LIMIT, lambdaContext } from '../support/events';
import { benchTableNames } from '../support/lambda-environment';
import { type Contender, measureInterleaved } from '../support/measure';
import { formatRatio } from '../support/report';
import { type BenchRun, fmt } from '../support/run-context';
import { summarize } from '../support/stats';
import { type LoadedBundle, operationContender } from './warm';

/**
 * What this machine allows an overlapped read: the SDK alone, no handler, one
 * GetItem against the same GetItem sent together with the limiter's count,
 * interleaved with the floor's and our getPet handlers. DynamoDB Local answers
 * both requests on the cores the client uses too, so the pair can take longer
 * than the slower of the two; on DynamoDB each is a network round trip.
 */
export async function measureOverlapFloor(run: BenchRun, endpoint: string, moduleOf: (name: string) => LoadedBundle): Promise<void> {
  const db = createDocumentClient({ endpoint, region: 'us-east-1', credentials: dummyCredentials });
  const counters = new RateLimitRepository(db, benchTableNames.rateLimits);
  const limits = { perMinute: ENTERPRISE_LIMIT, perDay: ENTERPRISE_LIMIT };
  const read = (i: number) =>
    db.send(new GetCommand({ TableName: benchTableNames.pets, Key: { id: 1 + (i % 100) }, ConsistentRead: true }));
  const contender = (id: string, call: (i: number) => Promise<unknown>): Contender => {
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
  };
  const { warmIterations: iterations, warmup } = run.settings;
  run.progress(`raw SDK: GetItem alone and GetItem together with the limiter's count, ${iterations} each, interleaved`);
  const samples = await measureInterleaved(
    [
      contender('get', read),
      contender('get+count', (i) =>
        Promise.all([read(i), counters.count('key_raw', limits, windowsAt(Date.now()), Date.now(), randomUUID())]),
      ),
      operationContender('floor', 'getPet', 'raw', moduleOf(bundleName('floor', 'getPet')).handler),
      operationContender('ours', 'getPet', 'raw', moduleOf(bundleName('ours', 'getPet')).handler),
    ],
    { iterations, warmup },
  );
  db.destroy();
  const p50 = (id: string) => summarize(samples.get(id) ?? []).p50;
  const [alone, together, floor, ours] = [p50('get'), p50('get+count'), p50('floor:getPet'), p50('ours:getPet')];
  run.rows.push({
    measure: 'getPet on DynamoDB Local, interleaved, p50 (ms): raw SDK GetItem → raw GetItem ‖ limiter count; handlers',
    ours: `raw ${fmt.ms(alone)} → ${fmt.ms(together)}; ours ${fmt.ms(ours)}`,
    plain: '—',
    express: '—',
    floor: fmt.ms(floor),
    ratio: `raw pair ${formatRatio(together / alone)} raw GetItem; ours ${formatRatio(ours / together)} raw pair, ${formatRatio(ours / floor)} floor`,
    target: 'what the machine allows',
    met: '',
  });
}
