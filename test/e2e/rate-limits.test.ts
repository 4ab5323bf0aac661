import { BAN_DURATION_SECONDS } from '../../functions/domain/rate-limit';
import { type TestApi, postJson, startTestApi } from '../support/api';
import { TestClock } from '../support/dynamo';

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
  clock.set('2029-06-01T10:00:05Z');
  const key = await api.issueKey('free');
  const responses = await Promise.all(Array.from({ length: 100 }, () => api.call('/pets', { key })));
  const served = responses.filter((response) => response.status === 200);
  const refused = responses.filter((response) => response.status === 429);
  expect(served).toHaveLength(60);
  expect(refused).toHaveLength(40);
  const remaining = served.map((response) => headersOf(response).remaining).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: 60 }, (_, index) => index));
  const minuteEnd = Date.parse('2029-06-01T10:01:00Z') / 1000;
  for (const response of served) expect(headersOf(response)).toMatchObject({ limit: 60, reset: minuteEnd });
  for (const response of refused) {
    expect(headersOf(response)).toEqual({ limit: 60, remaining: 0, reset: minuteEnd, retryAfter: 55 });
    expect(await errorCode(response)).toBe('rate_limited');
  }
});

it('serves the key again at the next minute, with fresh headers', async () => {
  clock.set('2029-06-01T11:00:00Z');
  const key = await api.issueKey('free');
  for (let index = 0; index < 60; index++) expect((await api.call('/pets', { key })).status).toBe(200);
  clock.set('2029-06-01T11:00:59.999Z');
  expect((await api.call('/pets', { key })).status).toBe(429);
  clock.set('2029-06-01T11:01:00Z');
  const next = await api.call('/pets', { key });
  expect(next.status).toBe(200);
  expect(headersOf(next)).toEqual({ limit: 60, remaining: 59, reset: Date.parse('2029-06-01T11:02:00Z') / 1000, retryAfter: undefined });
});

it('puts rate-limit headers on every answer to an identified caller: 201, 400, 404, 410 and 429', async () => {
  clock.set('2029-06-01T12:00:00Z');
  const key = await api.issueKey('pro');
  const answers = [
    await api.call('/pets', { ...postJson({ name: 'Rex', categoryId: 1 }), key }),
    await api.call('/pets?limit=0', { key }),
    await api.call('/pets/424242', { key }),
  ];
  expect(answers.map((response) => response.status)).toEqual([201, 400, 404]);
  answers.forEach((response, index) => expect(headersOf(response)).toMatchObject({ limit: 300, remaining: 299 - index }));
  clock.set('2031-01-01T00:00:00Z');
  const gone = await api.call('/pets/1', { key });
  expect(gone.status).toBe(410);
  expect(headersOf(gone)).toMatchObject({ limit: 300, remaining: 299 });
});

it('refuses request 1,001 of a UTC day with quota_exceeded until midnight, and serves again the next day', async () => {
  const key = await api.issueKey('free');
  const dayStart = Date.parse('2029-06-02T00:00:00Z');
  // 1,000 requests spread over 20 minutes: 50 a minute, under the minute limit.
  for (let minute = 0; minute < 20; minute++) {
    clock.now = dayStart + minute * 60_000;
    const batch = await Promise.all(Array.from({ length: 50 }, () => api.call('/pets?limit=1', { key })));
    expect(await Promise.all(batch.filter((response) => response.status !== 200).map(async (response) => `${response.status} ${await response.text()}`))).toEqual([]);
  }
  clock.now = dayStart + 20 * 60_000 + 30_000;
  const last = await api.call('/pets', { key });
  expect(last.status).toBe(429);
  expect(await errorCode(last)).toBe('quota_exceeded');
  const midnight = Date.parse('2029-06-03T00:00:00Z') / 1000;
  expect(headersOf(last)).toEqual({ limit: 1000, remaining: 0, reset: midnight, retryAfter: midnight - clock.now / 1000 });

  clock.set('2029-06-02T23:59:59Z');
  expect((await api.call('/pets', { key })).status).toBe(429);
  clock.set('2029-06-03T00:00:00Z');
  expect((await api.call('/pets', { key })).status).toBe(200);
});

it('shows the day window once it is closer to exhaustion than the minute', async () => {
  const key = await api.issueKey('enterprise', { perMinute: 50, perDay: 60 });
  clock.set('2029-06-04T08:00:00Z');
  for (let index = 0; index < 40; index++) await api.call('/pets', { key });
  clock.set('2029-06-04T08:01:00Z');
  const response = await api.call('/pets', { key });
  // Minute: 49 left of 50; day: 19 left of 60 → the day is described.
  expect(headersOf(response)).toMatchObject({ limit: 60, remaining: 19, reset: Date.parse('2029-06-05T00:00:00Z') / 1000 });
});

it(`suspends a key at its ${60}th refused request in one minute for ${BAN_DURATION_SECONDS / 60} minutes, then lifts the ban by itself`, async () => {
  const key = await api.issueKey('free');
  clock.set('2029-06-05T09:00:00Z');
  for (let index = 0; index < 60; index++) expect((await api.call('/pets', { key })).status).toBe(200);
  // 59 refusals are only rate_limited…
  for (let index = 0; index < 59; index++) expect(await errorCode(await api.call('/pets', { key }))).toBe('rate_limited');
  // …the 60th (another full minute's worth) starts the suspension.
  clock.set('2029-06-05T09:00:30Z');
  const banned = await api.call('/pets', { key });
  expect(banned.status).toBe(429);
  expect(await errorCode(banned)).toBe('key_suspended');
  const liftsAt = Date.parse('2029-06-05T09:15:30Z') / 1000;
  expect(headersOf(banned)).toEqual({ limit: 60, remaining: 0, reset: liftsAt, retryAfter: BAN_DURATION_SECONDS });

  // Still suspended in later minutes, with Retry-After counting down to the end.
  clock.set('2029-06-05T09:15:29Z');
  const stillBanned = await api.call('/pets', { key });
  expect(await errorCode(stillBanned)).toBe('key_suspended');
  expect(headersOf(stillBanned).retryAfter).toBe(1);

  clock.set('2029-06-05T09:15:30Z');
  expect((await api.call('/pets', { key })).status).toBe(200);
});

it('keeps a suspension that crosses midnight until its end', async () => {
  const key = await api.issueKey('free');
  clock.set('2029-06-06T23:55:00Z');
  await Promise.all(Array.from({ length: 120 }, () => api.call('/pets', { key })));
  const banned = await api.call('/pets', { key });
  expect(await errorCode(banned)).toBe('key_suspended');
  clock.set('2029-06-07T00:05:00Z');
  expect(await errorCode(await api.call('/pets', { key }))).toBe('key_suspended');
  clock.set('2029-06-07T00:10:01Z');
  expect((await api.call('/pets', { key })).status).toBe(200);
});

it('keeps keys apart: one key at its limit does not slow another', async () => {
  clock.set('2029-06-08T10:00:00Z');
  const busy = await api.issueKey('free');
  const quiet = await api.issueKey('free');
  await Promise.all(Array.from({ length: 70 }, () => api.call('/pets', { key: busy })));
  const response = await api.call('/pets', { key: quiet });
  expect(response.status).toBe(200);
  expect(headersOf(response).remaining).toBe(59);
});
