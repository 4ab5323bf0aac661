import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { createHandler } from '../../functions/authorizer/handler';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { issueTestKey } from '../support/api';
import { requestAuthorizerEvent } from '../support/api-gateway-events';
import { asFunction, createTestTables, testDependencies } from '../support/dynamo';

/**
 * The authorizer on the REST API REQUEST authorizer's event as AWS sends it,
 * headers and multiValueHeaders both ("Input to an API Gateway Lambda
 * authorizer", REQUEST input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-input.html),
 * with a real key on DynamoDB Local: the scheme in any case and one or more
 * spaces name the key (RFC 6750 section 2.1, RFC 9110 section 11.1); a second
 * Authorization field is refused whatever the order (RFC 9110 section 5.3).
 */
const now = Date.parse('2026-05-04T10:00:00Z');
let dependencies: Dependencies;
let key: string;
beforeAll(async () => {
  dependencies = testDependencies(await createTestTables(), () => now);
  key = await issueTestKey(dependencies, 'free');
});
afterAll(() => dependencies.db.destroy());

const authorize = (request: { headers?: Record<string, string>; repeatedHeaders?: Record<string, string[]> }) =>
  createHandler(
    asFunction('authorizer', dependencies),
    undefined,
  )(requestAuthorizerEvent({ method: 'GET', resource: '/pets', path: '/pets', ...request }));
const effectOf = (result: APIGatewayAuthorizerResult) => result.policyDocument.Statement[0]!.Effect;

it.each(['Bearer', 'bearer', 'BEARER', 'Bearer ', 'bEaReR   '])('allows `%s <key>` as the key itself', async (scheme) => {
  const canonical = await authorize({ headers: { Authorization: `Bearer ${key}` } });
  const result = await authorize({ headers: { Authorization: `${scheme} ${key}` } });
  expect(effectOf(result)).toBe('Allow');
  // The same key id, so the same limiter counters, ban and metering key.
  expect(result.principalId).toBe(canonical.principalId);
  expect(result.context).toEqual(canonical.context);
  expect(result.usageIdentifierKey).toBe(canonical.usageIdentifierKey);
});

it.each([
  ['a tab', () => `Bearer\t${key}`],
  ['two keys in one field', () => `Bearer ${key} ${key}`],
  ['another scheme', () => `Basic ${Buffer.from(`user:${key}`).toString('base64')}`],
])('refuses %s as Unauthorized', async (_, authorization) => {
  await expect(authorize({ headers: { Authorization: authorization() } })).rejects.toThrow(/^Unauthorized$/);
});

it.each([
  ['the valid key first', () => [`Bearer ${key}`, 'Bearer junk']],
  ['the valid key last', () => ['Bearer junk', `Bearer ${key}`]],
  ['the valid key twice', () => [`Bearer ${key}`, `Bearer ${key}`]],
])('refuses two Authorization fields (multiValueHeaders), %s', async (_, values) => {
  await expect(authorize({ repeatedHeaders: { Authorization: values() } })).rejects.toThrow(/^Unauthorized$/);
});
