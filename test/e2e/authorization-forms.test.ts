import { gatewayResponse } from '../../definitions/gateway-responses';
import { authorizer, routes } from '../../definitions/routes';
import { startTestApi, type TestApi } from '../support/api';
import { TestClock, testEndpoint, testInstant } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';

/**
 * One key, one bucket (decision 7), over real HTTP on the whole local API, on
 * DynamoDB Local behind a recording proxy that sees every DynamoDB call of the
 * functions. API Gateway caches the authorizer's answer by the exact
 * Authorization value (local/gateway.ts, cachingAuthorizer), so every spelling
 * of a key the authorizer accepted would be a cache miss of its own: a banned
 * key could skip its cached Deny with `bearer`, `BEARER`, two spaces… each
 * costing an authorizer call and its DynamoDB reads. The authorizer accepts
 * `Bearer <key>` only and refuses the rest by their shape: 401, no read. (WAF's
 * per-key rule counts them all in the key's one bucket: test/infra.)
 */
let proxy: DynamoDbFaultProxy;
let api: TestApi;
const clock = new TestClock(Date.parse(testInstant(2, '09:00:00')));
beforeAll(async () => {
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
  api = await startTestApi({ clock, dynamoEndpoint: proxy.endpoint });
});
afterAll(async () => {
  await api.close();
  await proxy.close();
});

const operationInvocations = () => routes.reduce((sum, route) => sum + api.functions[route.operationId]!.invocations, 0);
const authorizerInvocations = () => api.functions.authorizer!.invocations;

/** Bans a key the way the operation's limiter does: it keeps calling after its 429s. */
async function banByCalling(key: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const response = await api.call('/pets', { key });
    if (response.status === 429 && ((await response.json()) as { code: string }).code === 'key_suspended') return;
  }
  throw new Error('the key was never suspended');
}

async function answerOf(authorization: string) {
  const response = await api.call('/pets', { key: null, headers: { Authorization: authorization } });
  return { status: response.status, wwwAuthenticate: response.headers.get('www-authenticate'), body: await response.text() };
}

it('a banned key: `Bearer <key>` gets 429 key_suspended for one authorizer call per cache period; every other spelling gets 401 for no DynamoDB read', async () => {
  const key = await api.issueKey('free');
  await banByCalling(key);
  // Past the Allow cached before the ban: the authorizer reads the ban (15 minutes, more than the TTL) and denies.
  clock.now = Date.parse(testInstant(2, '09:05:00'));
  proxy.clear();
  const before = { authorizer: authorizerInvocations(), operations: operationInvocations() };

  const suspended = gatewayResponse('ACCESS_DENIED');
  for (let request = 0; request < 5; request++) expect((await answerOf(`Bearer ${key}`)).body).toBe(suspended.body);
  expect(authorizerInvocations()).toBe(before.authorizer + 1);
  const readsOfOneCheck = proxy.calls.length;
  expect(readsOfOneCheck).toBeGreaterThan(0);

  const variants = [
    `bearer ${key}`,
    `BEARER ${key}`,
    `Bearer  ${key}`,
    `bEaReR ${key}`,
    `Bearer\t${key}`,
    `BEARER   ${key}`,
    `Bearer${key}`,
  ];
  const unauthorized = gatewayResponse('UNAUTHORIZED');
  for (const authorization of variants) {
    for (let request = 0; request < 3; request++) {
      expect(await answerOf(authorization)).toEqual({ status: 401, wwwAuthenticate: 'Bearer', body: unauthorized.body });
    }
  }
  // The refusal names the form it wants.
  expect(JSON.parse(unauthorized.body)).toMatchObject({
    code: 'unauthorized',
    message: expect.stringContaining('"Authorization: Bearer <API_KEY>"'),
  });
  // No DynamoDB read for any variant: refused by the header's shape alone. Each costs an
  // authorizer invocation, as API Gateway's caching of a 401 is not documented (the local gateway caches none).
  expect(proxy.calls).toHaveLength(readsOfOneCheck);
  expect(authorizerInvocations()).toBe(before.authorizer + 1 + variants.length * 3);

  // The canonical form, until the cache period ends: still its one cached Deny, no call, no read.
  clock.now = Date.parse(testInstant(2, '09:05:00')) + authorizer.resultsCacheTtlSeconds * 1000 - 1000;
  expect((await answerOf(`Bearer ${key}`)).body).toBe(suspended.body);
  expect(authorizerInvocations()).toBe(before.authorizer + 1 + variants.length * 3);
  expect(proxy.calls).toHaveLength(readsOfOneCheck);
  expect(operationInvocations()).toBe(before.operations);
});
