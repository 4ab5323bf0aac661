import { issueKey, type PlanChoice, setPlan } from '../../admin/key-admin';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { TestClock, testInstant } from '../support/dynamo';

/**
 * A plan change is one event of the customer, applied at its next request
 * everywhere (decision 15): under a busy customer's traffic, over the three
 * operations and so three function instances holding allowance of it, a change
 * never answers 500, every answer after it carries the new limit, and the
 * customer is served in the next minute. The clock is the test's: about 25
 * requests a second of its time, five at once, never sleeping.
 */
let api: TestApi;
const clock = new TestClock();

beforeAll(async () => {
  api = await startTestApi({ clock });
});
afterAll(() => api.close());

const target = () => api.keyTool();

interface Answer {
  status: number;
  limit: number;
  /** The test clock's ms when it was sent. */
  at: number;
  code?: string;
  retryAfter?: number;
}

/** One request of the mix (6 lists, 3 gets, 1 create in ten), with its status, X-RateLimit-Limit and refusal. */
async function request(key: string, index: number, petId: number): Promise<Answer> {
  const kind = index % 10;
  const at = clock.now;
  const response =
    kind === 0
      ? await api.call('/pets', { key, ...postJson({ name: `load ${index}`, categoryId: 1 }) })
      : kind <= 3
        ? await api.call(`/pets/${petId}`, { key })
        : await api.call('/pets?limit=5', { key });
  const body = (await response.json()) as { code?: string };
  const retryAfter = response.headers.get('retry-after');
  return {
    status: response.status,
    limit: Number(response.headers.get('x-ratelimit-limit')),
    at,
    ...(response.status >= 400 ? { code: String(body.code) } : {}),
    ...(retryAfter !== null ? { retryAfter: Number(retryAfter) } : {}),
  };
}

/**
 * Sends `count` requests, five at once every 200 ms of the test's clock (25 a
 * second), as a client that honours Retry-After: after a 429 it waits that long
 * (docs/clients.md, "What to do"), so the ban rule never applies to it.
 */
async function load(key: string, count: number, petId: number, from: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let sent = 0; sent < count; sent += 5) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(5, count - sent) }, (_, offset) => request(key, from + sent + offset, petId)),
    );
    answers.push(...batch);
    const wait = Math.max(0, ...batch.map((answer) => answer.retryAfter ?? 0));
    clock.advance(wait > 0 ? wait * 1000 : 200);
  }
  return answers;
}

/** How many answers had each status, e.g. { 200: 31, 429: 4 }. */
function statuses(answers: Answer[]): Record<number, number> {
  const counted: Record<number, number> = {};
  for (const { status } of answers) counted[status] = (counted[status] ?? 0) + 1;
  return counted;
}

async function busyCustomer(plan: PlanChoice): Promise<{ key: string; keyId: string; petId: number }> {
  const issued = await issueKey(target(), { ...plan, owner: 'Busy Ltd' }, clock.now);
  const created = await api.call('/pets', { key: issued.secret, ...postJson({ name: 'first', categoryId: 1 }) });
  const petId = ((await created.json()) as { id: number }).id;
  return { key: issued.secret, keyId: issued.key.keyId, petId };
}

it('Business moved to Pro after about 140 requests of a minute at 25 a second: no 500, every later answer says 300, served in the next minute', async () => {
  clock.set(testInstant(3, '14:00:00.500'));
  const customer = await busyCustomer({ plan: 'business' });
  const before = await load(customer.key, 140, customer.petId, 0);
  expect(statuses(before)).toEqual({ 200: 126, 201: 14 });
  await setPlan(target(), customer.keyId, { plan: 'pro' }, clock.now);
  // The rest of the minute at 25 a second, waiting out the 429 at Pro's 300, and into the next minute.
  const after = await load(customer.key, 25 * 52, customer.petId, 140);
  expect(statuses(after)[500]).toBeUndefined();
  expect(after.every((answer) => answer.limit === 300)).toBe(true);
  const minuteEnd = Date.parse(testInstant(3, '14:01:00'));
  const rest = after.filter((answer) => answer.at < minuteEnd);
  const served = rest.filter((answer) => answer.status < 300).length;
  // Pro's 300 in the minute, less the 141 Business served (and at most the spare other instances hold: a tenth of 300).
  expect(served).toBeGreaterThanOrEqual(300 - 141 - 30);
  expect(served).toBeLessThanOrEqual(300 - 141);
  expect(new Set(rest.filter((answer) => answer.status === 429).map((answer) => answer.code))).toEqual(new Set(['rate_limited']));
  const nextMinute = after.filter((answer) => answer.at >= minuteEnd);
  expect(nextMinute.length).toBeGreaterThan(100);
  expect(nextMinute.slice(0, 100).every((answer) => answer.status === 200 || answer.status === 201)).toBe(true);
});

it('ten changes among Business, Pro and Free under the same load answer no 500', async () => {
  clock.set(testInstant(4, '09:00:00.500'));
  const customer = await busyCustomer({ plan: 'business' });
  const cycle: PlanChoice['plan'][] = ['pro', 'business', 'free', 'pro', 'free', 'business', 'pro', 'free', 'business', 'pro'];
  const answers: Answer[] = [];
  for (const [change, plan] of cycle.entries()) {
    answers.push(...(await load(customer.key, 100, customer.petId, change * 100)));
    await setPlan(target(), customer.keyId, { plan }, clock.now);
  }
  answers.push(...(await load(customer.key, 100, customer.petId, 1_000)));
  expect(statuses(answers)[500]).toBeUndefined();
  expect(statuses(answers)[503]).toBeUndefined();
});
