import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { CustomerTable, generateApiKey } from '../../functions/customers';
import { lambdaContext } from '../../test/support/api-gateway-events';
import { authorizerBundles } from '../support/contenders';
import { authorizerEvent, ENTERPRISE_LIMIT } from '../support/events';
import { benchTableNames } from '../support/lambda-environment';
import { type Contender, measureInterleaved } from '../support/measure';
import { formatRatio } from '../support/report';
import { type BenchRun, fmt } from '../support/run-context';
import { summarize } from '../support/stats';
import type { LoadedBundle } from './warm';

type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

/**
 * The authorizer's warm latency on DynamoDB Local, ours against the plain one:
 * one stored key, looked up by the hash of its secret on every invocation (API
 * Gateway's answer cache aside: this is the cost of each uncached key).
 */
export async function measureAuthorizer(
  run: BenchRun,
  db: DynamoDBDocumentClient,
  moduleOf: (name: string) => LoadedBundle,
): Promise<void> {
  const { secret, record } = generateApiKey({
    plan: 'enterprise',
    owner: 'bench',
    customLimits: { perMinute: ENTERPRISE_LIMIT, perDay: ENTERPRISE_LIMIT },
    now: Date.now(),
  });
  await new CustomerTable(db, benchTableNames).insert(record);
  const contender = (id: string, bundle: string): Contender => {
    const authorize = moduleOf(bundle).handler as unknown as AuthorizerHandler;
    return {
      id,
      // The same envelope for both: an Allow for the stored key reads as a 200.
      handler: async (event, context) => {
        const result = await authorize(event as unknown as APIGatewayRequestAuthorizerEvent, context);
        return { statusCode: result.principalId === record.keyId ? 200 : 500, body: JSON.stringify(result) };
      },
      next: (i) => ({ event: authorizerEvent(secret, 1 + (i % 100)) as never, context: lambdaContext(bundle) }),
      expectedStatus: 200,
    };
  };
  const { warmIterations: iterations, warmup } = run.settings;
  run.progress(`authorizer: ours and plain, ${iterations} invocations each on DynamoDB Local, interleaved`);
  const samples = await measureInterleaved([contender('ours', authorizerBundles.ours), contender('plain', authorizerBundles.plain)], {
    iterations,
    warmup,
  });
  const ours = summarize(samples.get('ours') ?? []);
  const plain = summarize(samples.get('plain') ?? []);
  run.rows.push({
    measure: 'Warm, DynamoDB Local, authorizer: p50 / p99 (ms)',
    ours: `${fmt.ms(ours.p50)} / ${fmt.ms(ours.p99)}`,
    plain: `${fmt.ms(plain.p50)} / ${fmt.ms(plain.p99)}`,
    express: '—',
    floor: '—',
    ratio: `${formatRatio(ours.p50 / plain.p50)} plain (p50)`,
    target: '—',
    met: '',
  });
}
