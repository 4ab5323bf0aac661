import { issueKey, revokeKey, rotateKey } from '../../admin/key-admin';
import { maxRequestBodyBytes } from '../../definitions/request-size-limits';
import { generateApiKey } from '../../functions/customers';
import { refusalLine } from '../../local/refusal-log';
import { getWithAuthorizationFields, postJson, startTestApi, type TestApi } from '../support/api';
import { TestClock, testInstant } from '../support/dynamo';

/**
 * npm start's operator log (local/refusal-log.ts): one line per refused
 * request, with its status, the Error object's code and why, and never a
 * secret. The lines are the ones npm start prints (refusalLine, the same sink
 * local/start.ts gives the gateway; test/e2e/local-start.test.ts reads them
 * from npm start itself), over real HTTP on DynamoDB Local, with the test's clock.
 */
const lines: string[] = [];
const clock = new TestClock(Date.parse(testInstant(3, '10:00:05')));
let api: TestApi;
const secrets: string[] = [];
beforeAll(async () => {
  api = await startTestApi({ clock, onRefusal: (refusal) => lines.push(refusalLine(refusal)) });
});
afterAll(() => api.close());

const target = () => api.keyTool();

/** An Enterprise key of the key tool's, with small limits; its secret is remembered for the last test. */
async function enterpriseKey(limits: { perMinute: number; perDay: number }) {
  const issued = await issueKey(target(), { plan: 'enterprise', customLimits: limits, owner: 'Acme' }, clock.now);
  secrets.push(issued.secret);
  return issued;
}

/** The lines the request added: the refused request's one line, parsed. */
async function refusalOf(path: string, init: RequestInit & { key?: string | null } = {}) {
  const before = lines.length;
  const response = await api.call(path, init);
  await response.arrayBuffer();
  const added = lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(added).toHaveLength(1);
  return { status: response.status, line: added[0]! };
}

/** Calls a second apart (the Enterprise usage plan's throttle refills 1 a second) until the answer's code is `code`. */
async function callUntil(key: string, code: string) {
  for (let attempt = 0; attempt < 30; attempt++) {
    clock.advance(1_000);
    const before = lines.length;
    const response = await api.call('/pets', { key });
    const body = (await response.json()) as { code?: string };
    if (body.code === code) {
      expect(lines.length).toBe(before + 1);
      return { status: response.status, line: JSON.parse(lines.at(-1)!) as Record<string, unknown> };
    }
  }
  throw new Error(`never answered ${code}`);
}

it('an unknown key, a malformed header, two Authorization fields: 401, each with its reason', async () => {
  const unknown = generateApiKey({ plan: 'free', owner: 'nobody', now: clock.now }).secret;
  secrets.push(unknown);
  expect(await refusalOf('/pets', { key: unknown })).toMatchObject({
    status: 401,
    line: { status: 401, code: 'unauthorized', errorType: 'UNAUTHORIZED', reason: 'unknown_key', httpMethod: 'GET', resourcePath: '/pets' },
  });
  expect(
    await refusalOf('/pets', { key: null, headers: { Authorization: `Basic ${Buffer.from(`me:${unknown}`).toString('base64')}` } }),
  ).toMatchObject({ status: 401, line: { status: 401, code: 'unauthorized', reason: 'malformed_authorization_header' } });
  const valid = (await enterpriseKey({ perMinute: 50, perDay: 1_000 })).secret;
  const before = lines.length;
  const twice = await getWithAuthorizationFields(`${api.url}/pets`, [`Bearer ${valid}`, 'Bearer junk']);
  expect(lines.slice(before)).toHaveLength(1);
  expect({ status: twice.status, line: JSON.parse(lines.at(-1)!) }).toMatchObject({
    status: 401,
    line: { status: 401, code: 'unauthorized', reason: 'several_authorization_fields' },
  });
});

it('a revoked key and an expired one (rotated, past its grace): 401 naming which, with the key id', async () => {
  const revoked = await enterpriseKey({ perMinute: 50, perDay: 1_000 });
  await revokeKey(target(), revoked.key.keyId, clock.now);
  expect(await refusalOf('/pets', { key: revoked.secret })).toMatchObject({
    status: 401,
    line: { status: 401, code: 'unauthorized', reason: 'revoked', principalId: revoked.key.keyId },
  });

  const rotated = await enterpriseKey({ perMinute: 50, perDay: 1_000 });
  const successor = await rotateKey(target(), rotated.key.keyId, 60_000, clock.now);
  secrets.push(successor.secret);
  clock.advance(61_000);
  expect(await refusalOf('/pets', { key: rotated.secret })).toMatchObject({
    status: 401,
    line: { status: 401, code: 'unauthorized', reason: 'expired', principalId: rotated.key.keyId },
  });
});

it("a key revoked or expired while the gateway caches its authorizer's Allow: the function's 401 names which, as the gateway's would", async () => {
  const revoked = await enterpriseKey({ perMinute: 50, perDay: 1_000 });
  const rotated = await enterpriseKey({ perMinute: 50, perDay: 1_000 });
  // Allowed once each: the gateway caches the authorizer's Allow for the key, and the next request reaches the function.
  for (const { secret } of [revoked, rotated]) expect((await api.call('/pets', { key: secret })).status).toBe(200);
  await revokeKey(target(), revoked.key.keyId, clock.now);
  secrets.push((await rotateKey(target(), rotated.key.keyId, 0, clock.now)).secret);
  clock.advance(1_000);
  // No errorType: the function answered, the limiter having learnt of the change at the key's next request.
  for (const [issued, reason] of [
    [revoked, 'revoked'],
    [rotated, 'expired'],
  ] as const) {
    const { status, line } = await refusalOf('/pets', { key: issued.secret });
    expect({ status, line }).toMatchObject({
      status: 401,
      line: { status: 401, code: 'unauthorized', reason, principalId: issued.key.keyId },
    });
    expect(line.errorType).toBeUndefined();
  }
});

it('rate_limited, then key_suspended, and quota_exceeded: 429 naming which', async () => {
  const flooder = await enterpriseKey({ perMinute: 3, perDay: 1_000 });
  expect(await callUntil(flooder.secret, 'rate_limited')).toMatchObject({
    status: 429,
    line: { status: 429, code: 'rate_limited', reason: 'rate_limited', principalId: flooder.key.keyId },
  });
  expect(await callUntil(flooder.secret, 'key_suspended')).toMatchObject({
    status: 429,
    line: { status: 429, code: 'key_suspended', principalId: flooder.key.keyId },
  });

  const daily = await enterpriseKey({ perMinute: 50, perDay: 2 });
  const { status, line } = await callUntil(daily.secret, 'quota_exceeded');
  expect({ status, line }).toMatchObject({ status: 429, line: { status: 429, code: 'quota_exceeded', principalId: daily.key.keyId } });
  expect(line.reason).toMatch(/quota/);
});

it('a body over the limit (413) and an unknown route (404), each with its reason', async () => {
  const key = (await enterpriseKey({ perMinute: 50, perDay: 1_000 })).secret;
  const large = { ...postJson({ name: 'x'.repeat(maxRequestBodyBytes + 1), categoryId: 1 }), key };
  expect(await refusalOf('/pets', large)).toMatchObject({
    status: 413,
    line: { status: 413, code: 'payload_too_large', errorType: 'WAF_FILTERED', reason: 'body_too_large', httpMethod: 'POST' },
  });
  expect(await refusalOf('/no-such-route', { key })).toMatchObject({
    status: 404,
    line: {
      status: 404,
      code: 'not_found',
      errorType: 'MISSING_AUTHENTICATION_TOKEN',
      reason: 'no_such_route',
      resourcePath: '/v1/no-such-route',
    },
  });
});

it('no line holds a secret, nor any part of one past its display prefix', () => {
  expect(lines.length).toBeGreaterThanOrEqual(9);
  const log = lines.join('\n');
  for (const secret of secrets) {
    const random = secret.slice('psk_'.length);
    for (let start = 0; start + 8 <= random.length; start++) expect(log).not.toContain(random.slice(start, start + 8));
  }
});
