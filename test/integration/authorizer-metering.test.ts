import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { pooledMeteringKey } from '../../definitions/metering-pool';
import { createHandler } from '../../functions/authorizer/handler';
import { CustomerTable, generateApiKey } from '../../functions/customers';
import { meteringSlot } from '../../functions/domain/metering';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { requestAuthorizerEvent } from '../support/api-gateway-events';
import { asFunction, createTestTables, testDependencies } from '../support/dynamo';

/**
 * What the authorizer returns as usageIdentifierKey, on DynamoDB Local: API
 * Gateway meters the request against the usage plan of the API key with that
 * value, so it must be a pooled key of the caller's plan (Free, Pro,
 * Business) or an Enterprise key's own.
 */
let dependencies: Dependencies;
beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
});
afterAll(() => dependencies.db.destroy());

const pool = { prefix: '0f3e4c1a11114b5c9d8e7f6a5b4c3d2e', keysPerPlan: 10 };

async function authorize(secret: string): Promise<APIGatewayAuthorizerResult> {
  const event = requestAuthorizerEvent({ method: 'GET', resource: '/pets', path: '/pets', headers: { Authorization: `Bearer ${secret}` } });
  return createHandler(asFunction('authorizer', dependencies), pool)(event);
}

it.each(['free', 'pro', 'business'] as const)('a %s key is metered by its slot of the pooled keys of its plan', async (plan) => {
  const { secret, record } = generateApiKey({ plan, owner: 'Acme', now: Date.now() });
  await new CustomerTable(dependencies.db, dependencies.tableNames).insert(record);
  const result = await authorize(secret);
  expect(result.usageIdentifierKey).toBe(pooledMeteringKey(pool.prefix, plan, meteringSlot(record.customerId, pool.keysPerPlan)));
  expect(result.usageIdentifierKey).not.toBe(record.meteringKey);
});

it('an Enterprise key is metered by its own API key', async () => {
  const { secret, record } = generateApiKey({
    plan: 'enterprise',
    owner: 'Acme',
    customLimits: { perMinute: 10, perDay: 100 },
    now: Date.now(),
  });
  await new CustomerTable(dependencies.db, dependencies.tableNames).insert(record);
  expect((await authorize(secret)).usageIdentifierKey).toBe(record.meteringKey);
});
