import { gatewayResponse } from '../../definitions/gateway-responses';
import { routes } from '../../definitions/routes';
import { getWithAuthorizationFields, startTestApi, type TestApi } from '../support/api';
import { TestClock, testEndpoint, testInstant } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';

/**
 * The credentials as RFC 6750 section 2.1 (`"Bearer" 1*SP b64token`) and RFC
 * 9110 section 11.1 (a case-insensitive scheme) write them, decision 7, over
 * real HTTP on the whole local API, on DynamoDB Local behind a recording proxy
 * that sees every DynamoDB call of the functions. Every form names the one
 * key: its limits, its ban. API Gateway caches the authorizer's answer by the
 * exact Authorization value (local/gateway.ts, cachingAuthorizer), so a form
 * costs at most one authorizer call per cache period. Authorization is a
 * singleton field (RFC 9110 sections 5.3 and 11.6.2): two of them are refused
 * whatever their order.
 */
let proxy: DynamoDbFaultProxy;
let api: TestApi;
const clock = new TestClock();
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
/** The accepted forms besides the canonical `Bearer <key>`. */
const otherForms = (key: string) => [`bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`];

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
  return {
    status: response.status,
    wwwAuthenticate: response.headers.get('www-authenticate') ?? undefined,
    remaining: response.headers.get('x-ratelimit-remaining'),
    body: await response.text(),
  };
}

it('`bearer`, `BEARER` and two spaces are served like `Bearer <key>`, and counted on the key: X-RateLimit-Remaining keeps falling across forms', async () => {
  clock.set(testInstant(2, '08:00:05'));
  const key = await api.issueKey('free');
  const answers = [];
  for (const authorization of [`Bearer ${key}`, ...otherForms(key), `Bearer ${key}`]) answers.push(await answerOf(authorization));
  expect(answers.map(({ status, remaining }) => ({ status, remaining }))).toEqual(
    [59, 58, 57, 56, 55].map((remaining) => ({ status: 200, remaining: String(remaining) })),
  );
});

it('a banned key gets the same 429 key_suspended in every form, each form for at most one authorizer call per cache period', async () => {
  clock.set(testInstant(2, '09:00:00'));
  const key = await api.issueKey('free');
  await banByCalling(key);
  // Past the Allow cached before the ban: the authorizer reads the ban (15 minutes, more than the TTL) and denies.
  clock.set(testInstant(2, '09:05:00'));
  const before = { authorizer: authorizerInvocations(), operations: operationInvocations() };
  const suspended = gatewayResponse('ACCESS_DENIED');
  const forms = [`Bearer ${key}`, ...otherForms(key)];
  for (const authorization of forms) {
    for (let request = 0; request < 3; request++) {
      const answer = await answerOf(authorization);
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 429, body: suspended.body });
    }
  }
  expect(authorizerInvocations()).toBe(before.authorizer + forms.length);
  expect(operationInvocations()).toBe(before.operations);
});

it.each([
  ['a tab', (key: string) => `Bearer\t${key}`],
  ['two keys in one field', (key: string) => `Bearer ${key} ${key}`],
  ['two credentials in one field', (key: string) => `Bearer ${key}, Bearer ${key}`],
  ['another scheme', (key: string) => `Basic ${Buffer.from(`user:${key}`).toString('base64')}`],
])('%s: 401 with the Error object and WWW-Authenticate: Bearer, for no DynamoDB read', async (_, form) => {
  const key = await api.issueKey('free');
  proxy.clear();
  const unauthorized = gatewayResponse('UNAUTHORIZED');
  expect(await answerOf(form(key))).toEqual({ status: 401, wwwAuthenticate: 'Bearer', remaining: null, body: unauthorized.body });
  expect(JSON.parse(unauthorized.body)).toEqual({
    code: 'unauthorized',
    message: expect.stringContaining('"Authorization: Bearer <API_KEY>"'),
    status: 401,
  });
  // Refused by the header's shape alone.
  expect(proxy.calls).toHaveLength(0);
});

it('two Authorization fields get the same 401 in either order, a cached Allow for the key notwithstanding', async () => {
  const key = await api.issueKey('free');
  expect((await answerOf(`Bearer ${key}`)).status).toBe(200);
  const before = operationInvocations();
  const unauthorized = gatewayResponse('UNAUTHORIZED');
  const expected = { status: 401, wwwAuthenticate: 'Bearer', body: unauthorized.body };
  for (const fields of [
    [`Bearer ${key}`, 'Bearer junk'],
    ['Bearer junk', `Bearer ${key}`],
    [`Bearer ${key}`, `bearer ${key}`],
  ]) {
    expect(await getWithAuthorizationFields(`${api.url}/pets`, fields)).toEqual(expected);
  }
  expect(operationInvocations()).toBe(before);
});
