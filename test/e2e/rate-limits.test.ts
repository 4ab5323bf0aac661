import { issueKey, rotateKey, setPlan } from '../../admin/key-admin';
import { BAN_DURATION_SECONDS } from '../../definitions/plans';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { atInstant, beforeGetPetSunset, getPetSunset, TestClock, testInstant } from '../support/dynamo';

/**
 * Plans, limits and bans over real HTTP on DynamoDB Local (decisions 8 and 9).
 * The clock is the test's: windows are crossed by moving it, never by sleeping.
 */
let api: TestApi;
const clock = new TestClock();

beforeAll(async () => {
  api = await startTestApi({ clock });
});
afterAll(() => api.close());
/** The key tool, as `npx petstore-keys` works on npm start's. */
const target = () => api.keyTool();

const headersOf = (response: Response) => ({
  limit: Number(response.headers.get('x-ratelimit-limit')),
  remaining: Number(response.headers.get('x-ratelimit-remaining')),
  reset: Number(response.headers.get('x-ratelimit-reset')),
  retryAfter: response.headers.get('retry-after') === null ? undefined : Number(response.headers.get('retry-after')),
});

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

it('gives a Free key exactly 60 of 100 concurrent requests in one minute, with Remaining 59..0 each once', async () => {
  clock.set(testInstant(0, '10:00:05'));
  const key = await api.issueKey('free');
  const responses = await Promise.all(Array.from({ length: 100 }, () => api.call('/pets', { key })));
  const served = responses.filter((response) => response.status === 200);
  const refused = responses.filter((response) => response.status === 429);
  expect(served).toHaveLength(60);
  expect(refused).toHaveLength(40);
  const remaining = served.map((response) => headersOf(response).remaining).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: 60 }, (_, index) => index));
  const minuteEnd = Date.parse(testInstant(0, '10:01:00')) / 1000;
  for (const response of served) expect(headersOf(response)).toMatchObject({ limit: 60, reset: minuteEnd });
  for (const response of refused) {
    expect(headersOf(response)).toEqual({ limit: 60, remaining: 0, reset: minuteEnd, retryAfter: 55 });
    expect(await errorCode(response)).toBe('rate_limited');
  }
});

it('serves the key again at the next minute, with fresh headers', async () => {
  clock.set(testInstant(0, '11:00:00'));
  const key = await api.issueKey('free');
  for (let index = 0; index < 60; index++) expect((await api.call('/pets', { key })).status).toBe(200);
  clock.set(testInstant(0, '11:00:59.999'));
  expect((await api.call('/pets', { key })).status).toBe(429);
  clock.set(testInstant(0, '11:01:00'));
  const next = await api.call('/pets', { key });
  expect(next.status).toBe(200);
  expect(headersOf(next)).toEqual({
    limit: 60,
    remaining: 59,
    reset: Date.parse(testInstant(0, '11:02:00')) / 1000,
    retryAfter: undefined,
  });
});

it('puts rate-limit headers on every answer to an identified caller: 201, 400, 404, 410 and 429', async () => {
  clock.set(testInstant(0, '12:00:00'));
  const key = await api.issueKey('pro');
  const answers = [await api.call('/pets', { ...postJson({ name: 'Rex', categoryId: 1 }), key }), await api.call('/pets?limit=0', { key })];
  expect(answers.map((response) => response.status)).toEqual([201, 400]);
  for (const [index, response] of answers.entries()) expect(headersOf(response)).toMatchObject({ limit: 300, remaining: 299 - index });
  // getPet's 404 exists only before its sunset: one request on a day of its own, so no count is carried over.
  const missing = await atInstant(clock, beforeGetPetSunset, () => api.call('/pets/424242', { key }));
  expect(missing.status).toBe(404);
  expect(headersOf(missing)).toMatchObject({ limit: 300, remaining: 299 });
  clock.now = Math.max(getPetSunset, Date.parse(testInstant(1, '12:00:00')));
  const gone = await api.call('/pets/1', { key });
  expect(gone.status).toBe(410);
  expect(headersOf(gone)).toMatchObject({ limit: 300, remaining: 299 });
});

it('refuses request 1,001 of a UTC day with quota_exceeded until midnight, and serves again the next day', async () => {
  const key = await api.issueKey('free');
  const dayStart = Date.parse(testInstant(1, '00:00:00'));
  // 1,000 requests spread over 20 minutes: 50 a minute, under the minute limit.
  for (let minute = 0; minute < 20; minute++) {
    clock.now = dayStart + minute * 60_000;
    const batch = await Promise.all(Array.from({ length: 50 }, () => api.call('/pets?limit=1', { key })));
    expect(
      await Promise.all(
        batch.filter((response) => response.status !== 200).map(async (response) => `${response.status} ${await response.text()}`),
      ),
    ).toEqual([]);
  }
  clock.now = dayStart + 20 * 60_000 + 30_000;
  const last = await api.call('/pets', { key });
  expect(last.status).toBe(429);
  expect(await errorCode(last)).toBe('quota_exceeded');
  const midnight = Date.parse(testInstant(2, '00:00:00')) / 1000;
  expect(headersOf(last)).toEqual({ limit: 1000, remaining: 0, reset: midnight, retryAfter: midnight - clock.now / 1000 });

  clock.set(testInstant(1, '23:59:59'));
  expect((await api.call('/pets', { key })).status).toBe(429);
  clock.set(testInstant(2, '00:00:00'));
  expect((await api.call('/pets', { key })).status).toBe(200);
});

it('shows the day window once it is closer to exhaustion than the minute', async () => {
  const key = await api.issueKey('enterprise', { perMinute: 50, perDay: 60 });
  clock.set(testInstant(3, '08:00:00'));
  for (let index = 0; index < 40; index++) await api.call('/pets', { key });
  clock.set(testInstant(3, '08:01:00'));
  const response = await api.call('/pets', { key });
  // Minute: 49 left of 50; day: 19 left of 60 → the day is described.
  expect(headersOf(response)).toMatchObject({ limit: 60, remaining: 19, reset: Date.parse(testInstant(4, '00:00:00')) / 1000 });
});

it(`suspends a key at its ${60}th refused request in one minute for ${BAN_DURATION_SECONDS / 60} minutes, then lifts the ban by itself`, async () => {
  const key = await api.issueKey('free');
  clock.set(testInstant(4, '09:00:00'));
  for (let index = 0; index < 60; index++) expect((await api.call('/pets', { key })).status).toBe(200);
  // 59 refusals are only rate_limited…
  for (let index = 0; index < 59; index++) expect(await errorCode(await api.call('/pets', { key }))).toBe('rate_limited');
  // …the 60th (another full minute's worth) starts the suspension.
  clock.set(testInstant(4, '09:00:30'));
  const banned = await api.call('/pets', { key });
  expect(banned.status).toBe(429);
  expect(await errorCode(banned)).toBe('key_suspended');
  const liftsAt = Date.parse(testInstant(4, '09:15:30')) / 1000;
  expect(headersOf(banned)).toEqual({ limit: 60, remaining: 0, reset: liftsAt, retryAfter: BAN_DURATION_SECONDS });

  // Still suspended in later minutes, with Retry-After counting down to the end.
  clock.set(testInstant(4, '09:15:29'));
  const stillBanned = await api.call('/pets', { key });
  expect(await errorCode(stillBanned)).toBe('key_suspended');
  expect(headersOf(stillBanned).retryAfter).toBe(1);

  clock.set(testInstant(4, '09:15:30'));
  expect((await api.call('/pets', { key })).status).toBe(200);
});

it('keeps a suspension that crosses midnight until its end', async () => {
  const key = await api.issueKey('free');
  clock.set(testInstant(5, '23:55:00'));
  await Promise.all(Array.from({ length: 120 }, () => api.call('/pets', { key })));
  const banned = await api.call('/pets', { key });
  expect(await errorCode(banned)).toBe('key_suspended');
  clock.set(testInstant(6, '00:05:00'));
  expect(await errorCode(await api.call('/pets', { key }))).toBe('key_suspended');
  clock.set(testInstant(6, '00:10:01'));
  expect((await api.call('/pets', { key })).status).toBe(200);
});

it('keeps keys apart: one key at its limit does not slow another', async () => {
  clock.set(testInstant(7, '10:00:00'));
  const busy = await api.issueKey('free');
  const quiet = await api.issueKey('free');
  await Promise.all(Array.from({ length: 70 }, () => api.call('/pets', { key: busy })));
  const response = await api.call('/pets', { key: quiet });
  expect(response.status).toBe(200);
  expect(headersOf(response).remaining).toBe(59);
});

describe('a key rotated with a grace period: the old and the new secret share one set of limits (the customer’s)', () => {
  const limits = { perMinute: 5, perDay: 1_000 };

  /** A key issued and rotated by the key tool's rules, as `petstore-keys rotate --grace 1h` does. */
  async function rotatedPair(): Promise<{ old: string; successor: string }> {
    const issued = await issueKey(target(), { plan: 'enterprise', customLimits: limits, owner: 'Acme' }, clock.now);
    const old = issued.secret;
    // Used once before the rotation: the successor inherits this count too.
    const first = await api.call('/pets', { key: old });
    expect(first.status).toBe(200);
    expect(headersOf(first).remaining).toBe(4);
    const rotated = await rotateKey(target(), issued.key.keyId, 3_600_000, clock.now);
    return { old, successor: rotated.secret };
  }

  it('gives both secrets together exactly the per-minute limit, X-RateLimit-Remaining counting down across both, then 429 for either', async () => {
    clock.set(testInstant(8, '10:00:05'));
    const { old, successor } = await rotatedPair();
    const remaining: number[] = [];
    for (const key of [successor, old, successor, old]) {
      const response = await api.call('/pets', { key });
      expect(response.status).toBe(200);
      remaining.push(headersOf(response).remaining);
    }
    expect(remaining).toEqual([3, 2, 1, 0]);
    for (const key of [old, successor]) {
      const refused = await api.call('/pets', { key });
      expect(refused.status).toBe(429);
      expect(await errorCode(refused)).toBe('rate_limited');
      expect(headersOf(refused)).toMatchObject({ limit: 5, remaining: 0 });
    }
    // The next minute both are served again, from one fresh count.
    clock.set(testInstant(8, '10:01:00'));
    expect(headersOf(await api.call('/pets', { key: old })).remaining).toBe(4);
    expect(headersOf(await api.call('/pets', { key: successor })).remaining).toBe(3);
  });

  it('suspends both: a ban earned with the old secret holds for the new one', async () => {
    clock.set(testInstant(8, '11:00:05'));
    const { old, successor } = await rotatedPair();
    for (let served = 1; served < limits.perMinute; served++) expect((await api.call('/pets', { key: successor })).status).toBe(200);
    // Another full minute's worth of refusals (the ban threshold: 5), all with the old secret.
    const codes: string[] = [];
    for (let refused = 0; refused < limits.perMinute; refused++) codes.push(await errorCode(await api.call('/pets', { key: old })));
    expect(codes).toEqual([...Array(limits.perMinute - 1).fill('rate_limited'), 'key_suspended']);
    clock.set(testInstant(8, '11:05:00'));
    expect(await errorCode(await api.call('/pets', { key: successor }))).toBe('key_suspended');
  });
});

describe('set-plan while the gateway still caches the authorizer answer: every answer carries the new plan limits (#29)', () => {
  it('a banned Enterprise key (5 a minute) moved to Free: its 429 key_suspended answers say 60 from the next one on, in this minute and later ones', async () => {
    clock.set(testInstant(9, '10:00:05'));
    const issued = await issueKey(
      target(),
      { plan: 'enterprise', customLimits: { perMinute: 5, perDay: 1_000 }, owner: 'Acme' },
      clock.now,
    );
    const key = issued.secret;
    // Its minute, then another full minute's worth of refusals: banned. A second apart, as its usage plan's
    // throttle (a bucket of 10, 1 a second: definitions/usage-plan-limits.ts) lets every one of them reach the API.
    for (let index = 0; index < 2 * 5; index++) {
      await api.call('/pets', { key });
      clock.advance(1_000);
    }
    const banned = await api.call('/pets', { key });
    expect(await errorCode(banned)).toBe('key_suspended');
    expect(headersOf(banned).limit).toBe(5);
    await setPlan(target(), issued.key.keyId, { plan: 'free' }, clock.now);
    const after: Response[] = [];
    for (let index = 0; index < 3; index++) after.push(await api.call('/pets', { key }));
    clock.set(testInstant(9, '10:03:00'));
    after.push(await api.call('/pets', { key }));
    for (const response of after) {
      expect(response.status).toBe(429);
      expect(await errorCode(response)).toBe('key_suspended');
      expect(headersOf(response).limit).toBe(60);
    }
  });

  it('a Free key refused for its used-up minute, moved to Pro: served at its next request, under 300 a minute', async () => {
    clock.set(testInstant(9, '11:00:05'));
    const issued = await issueKey(target(), { plan: 'free', owner: 'Acme' }, clock.now);
    const key = issued.secret;
    for (let index = 0; index < 60; index++) expect((await api.call('/pets', { key })).status).toBe(200);
    const refused = await api.call('/pets', { key });
    expect(await errorCode(refused)).toBe('rate_limited');
    expect(headersOf(refused).limit).toBe(60);
    await setPlan(target(), issued.key.keyId, { plan: 'pro' }, clock.now);
    const next = await api.call('/pets', { key });
    expect(next.status).toBe(200);
    expect(headersOf(next)).toMatchObject({ limit: 300, remaining: 300 - 61 });
  });
});

/**
 * API Gateway applies the usage plan of the API key the authorizer's cached
 * answer names, as that plan is now ("Usage plans and API keys for REST APIs in
 * API Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-usage-plans.html):
 * the key tool raises it before the customer's record changes, so the backstop
 * follows the customer at once, whatever the cached answer's context says.
 */
describe('the usage-plan backstop follows the customer: an Enterprise raise is served from the next request (#44)', () => {
  it('an Enterprise customer at 5/min raised to 600/min after one request: the next 30 in a row are served, each with X-RateLimit-Limit 600', async () => {
    clock.set(testInstant(10, '10:00:05'));
    const issued = await issueKey(
      target(),
      { plan: 'enterprise', customLimits: { perMinute: 5, perDay: 1_000 }, owner: 'Acme' },
      clock.now,
    );
    const key = issued.secret;
    // The authorizer's answer, cached from here on, names the 5/min plan.
    expect((await api.call('/pets', { key })).status).toBe(200);
    await setPlan(target(), issued.key.keyId, { plan: 'enterprise', customLimits: { perMinute: 600, perDay: 1_000 } }, clock.now);
    const answers: { status: number; limit: string | null }[] = [];
    for (let request = 0; request < 30; request++) {
      const response = await api.call('/pets', { key });
      answers.push({ status: response.status, limit: response.headers.get('x-ratelimit-limit') });
    }
    expect(answers).toEqual(Array.from({ length: 30 }, () => ({ status: 200, limit: '600' })));
  });
});

describe("an Enterprise customer's own usage plan never refuses what its contract allows (#37)", () => {
  it('a key of 20/min and 100/day that loops 300 requests in one second is banned, and after the ban is served until its day’s 100', async () => {
    // npm start's gateway applies the usage plan as the key tool makes it: a throttle from the limits, no quota.
    const start = Date.parse(testInstant(6, '09:00:00'));
    clock.now = start;
    const key = await api.issueKey('enterprise', { perMinute: 20, perDay: 100 });
    const flood: string[] = [];
    for (let request = 0; request < 300; request++) {
      clock.now = start + request * 3;
      const response = await api.call('/pets', { key });
      flood.push(response.status === 200 ? 'served' : await errorCode(response));
    }
    expect(flood.filter((outcome) => outcome === 'served')).toHaveLength(20);
    // Our limiter refuses the rest of the minute and bans the key at its 20th refusal; the usage plan's throttle
    // (a bucket of 40, 1 a second) refuses the flood's remainder at the gateway, as AWS would.
    expect(flood.indexOf('key_suspended')).toBe(39);
    expect(flood.every((outcome) => ['served', 'rate_limited', 'key_suspended'].includes(outcome))).toBe(true);

    // The ban ends; the client sends its contract's 20 a minute until the day's 100 are used.
    let served = 20;
    for (let minute = 16; served < 100; minute++) {
      for (let request = 0; request < 20; request++) {
        clock.now = start + minute * 60_000 + request * 1_000;
        const response = await api.call('/pets', { key });
        expect({ minute, request, status: response.status }).toEqual({ minute, request, status: 200 });
        served++;
      }
    }
    const over = await api.call('/pets', { key });
    expect(over.status).toBe(429);
    expect(await errorCode(over)).toBe('quota_exceeded');
  });
});
