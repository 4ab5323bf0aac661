import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { authorizer, functionTimeoutSeconds } from '../../definitions/routes';
import { createHandler } from '../../functions/authorizer/handler';
import { CustomerTable, generateApiKey } from '../../functions/customers';
import { CounterTable } from '../../functions/rate-limit';
import { windowsAt } from '../../functions/rate-limit/testing';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { requestAuthorizerEvent } from '../support/api-gateway-events';
import { asFunction, createTestTables, testDependencies } from '../support/dynamo';

/**
 * The authorizer reads a customer's ban where the rate limiter records it, on
 * DynamoDB Local and with the authorizer's own grants only (asFunction: GetItem
 * on apiKeys and rateLimits), and denies the key at the gateway only while the
 * ban outlasts a cached answer (functions/rate-limit/bans.ts).
 */
const now = Date.parse('2026-05-04T23:50:00Z');
let dependencies: Dependencies;
beforeAll(async () => {
  dependencies = testDependencies(await createTestTables(), () => now);
});
afterAll(() => dependencies.db.destroy());

async function issue(): Promise<{ secret: string; keyId: string }> {
  const { secret, record } = generateApiKey({ plan: 'free', owner: 'Acme', now });
  await new CustomerTable(dependencies.db, dependencies.tableNames).insert(record);
  return { secret, keyId: record.keyId };
}

async function ban(keyId: string, untilMs: number): Promise<void> {
  const caller = { keyId, customerId: keyId };
  const counters = new CounterTable(dependencies.db, dependencies.tableNames.rateLimits);
  await counters.write({ kind: 'ban', caller, windows: windowsAt(now), instanceId: 'test', until: untilMs / 1000 });
}

async function authorize(secret: string, as: Dependencies = asFunction('authorizer', dependencies)): Promise<APIGatewayAuthorizerResult> {
  const event = requestAuthorizerEvent({ method: 'GET', resource: '/pets', path: '/pets', headers: { Authorization: `Bearer ${secret}` } });
  return createHandler(as, undefined)(event);
}

const effectOf = (result: APIGatewayAuthorizerResult) => result.policyDocument.Statement[0]!.Effect;
const cachedFor = (authorizer.resultsCacheTtlSeconds + functionTimeoutSeconds) * 1000;

it('denies a key banned for longer than a cached answer can last, naming the refusal in the context', async () => {
  const { secret, keyId } = await issue();
  await ban(keyId, now + 15 * 60_000);
  const result = await authorize(secret);
  expect(effectOf(result)).toBe('Deny');
  expect(result.principalId).toBe(keyId);
  expect(result.context).toEqual({ refusal: 'key_suspended', bannedUntil: String((now + 15 * 60_000) / 1000) });
  expect(result.usageIdentifierKey).toBeUndefined();
});

it('allows a key whose ban ends before a cached Deny would (its operation answers key_suspended), and a key never banned', async () => {
  const { secret, keyId } = await issue();
  await ban(keyId, now + cachedFor);
  expect(effectOf(await authorize(secret))).toBe('Allow');
  expect(effectOf(await authorize((await issue()).secret))).toBe('Allow');
});

it('sees a ban that crosses midnight, as the limiter records it', async () => {
  const { secret, keyId } = await issue();
  await ban(keyId, now + 20 * 60_000);
  const tomorrow = testDependencies(dependencies.tableNames, () => now + 11 * 60_000);
  try {
    expect(effectOf(await authorize(secret, asFunction('authorizer', tomorrow)))).toBe('Deny');
  } finally {
    tomorrow.db.destroy();
  }
});

it('lets the key through when the ban cannot be read: the operation still refuses a banned key', async () => {
  const { secret } = await issue();
  const blind = { ...asFunction('authorizer', dependencies), tableNames: { ...dependencies.tableNames, rateLimits: 'no-such-table' } };
  expect(effectOf(await authorize(secret, blind))).toBe('Allow');
});
