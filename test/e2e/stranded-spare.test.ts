import { issueKey, keyUsage } from '../../admin/key-admin';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { TestClock, testInstant } from '../support/dynamo';

/**
 * Spare left behind by instances a customer stops reaching, minute after
 * minute, stays within the day's bound (docs/clients.md, "How exact"): a
 * `quota_exceeded` comes only with at most a tenth of the per-minute limit of
 * the day left, and `usage` says at most that much more than was answered.
 * Each burst goes to one operation, so to one function instance, and stops
 * once that instance holds spare (usage above the answers shows it); the
 * creates that follow reach a third instance.
 */
let api: TestApi;
const clock = new TestClock();

beforeAll(async () => {
  api = await startTestApi({ clock });
});
afterAll(() => api.close());

const target = () => api.keyTool();
const limits = { perMinute: 100, perDay: 100 };
const bound = limits.perMinute / 10;

async function usageOf(keyId: string): Promise<number> {
  return (await keyUsage(target(), keyId, 1, clock.now)).total;
}

/**
 * Sends `path` every 100 ms until the instance answering it took a large lease
 * (usage rose 8 above the answers since the burst began), or 40 times (the
 * limiter may hold it to less: the day's bound).
 */
async function burst(key: string, keyId: string, path: string, answered: { count: number }): Promise<void> {
  const excessBefore = (await usageOf(keyId)) - answered.count;
  for (let sent = 0; sent < 40; sent++) {
    const response = await api.call(path, { key });
    expect(response.status).toBe(200);
    answered.count++;
    clock.advance(100);
    if ((await usageOf(keyId)) - answered.count >= excessBefore + 8) return;
  }
}

it('two bursts that stop right after a lease, then creates until refused: quota_exceeded no earlier than the bound, usage within it', async () => {
  clock.set(testInstant(5, '10:00:00'));
  const issued = await issueKey(target(), { plan: 'enterprise', customLimits: limits, owner: 'Stranded Inc' }, clock.now);
  const { secret: key } = issued;
  const keyId = issued.key.keyId;
  const answered = { count: 0 };
  await burst(key, keyId, '/pets?limit=1', answered);
  const created = await api.call('/pets', { key, ...postJson({ name: 'kept', categoryId: 1 }) });
  answered.count++;
  const petId = ((await created.json()) as { id: number }).id;
  clock.set(testInstant(5, '10:01:00'));
  await burst(key, keyId, `/pets/${petId}`, answered);
  clock.set(testInstant(5, '10:02:00'));
  let refusal: Response | undefined;
  while (!refusal && answered.count <= limits.perDay) {
    const response = await api.call('/pets', { key, ...postJson({ name: 'until refused', categoryId: 1 }) });
    if (response.status === 201) answered.count++;
    else refusal = response;
    clock.advance(700);
  }
  if (!refusal) throw new Error(`served ${answered.count} creates, past the day's ${limits.perDay}`);
  expect(refusal.status).toBe(429);
  expect(((await refusal.json()) as { code: string }).code).toBe('quota_exceeded');
  expect(answered.count).toBeGreaterThanOrEqual(limits.perDay - bound);
  const refusedAt = clock.now - 700;
  expect(Number(refusal.headers.get('retry-after'))).toBe(Math.ceil((Date.parse(testInstant(6, '00:00:00')) - refusedAt) / 1000));
  const usage = await usageOf(keyId);
  expect(usage).toBeGreaterThanOrEqual(answered.count);
  expect(usage - answered.count).toBeLessThanOrEqual(bound);
  // What docs/clients.md allows after it: the instances holding the rest may serve it, never past the day's limit.
  for (const path of ['/pets?limit=1', `/pets/${petId}`, '/pets?limit=1']) {
    if ((await api.call(path, { key })).status === 200) answered.count++;
  }
  expect(answered.count).toBeLessThanOrEqual(limits.perDay);
});
