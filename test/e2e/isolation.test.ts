import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { pooledMeteringKey } from '../../definitions/metering-pool';
import { authorizer, routes } from '../../definitions/routes';
import { pooledUsagePlan, type UsagePlanSettings } from '../../definitions/usage-plan-limits';
import { generateApiKey, hashApiKey } from '../../functions/customers';
import { revokeInKeyTable, startTestApi, type TestApi } from '../support/api';
import { TestClock, testInstant } from '../support/dynamo';

/**
 * No customer can hurt another (SCALING.md, "One customer's flood"), on the
 * local gateway, which applies usage plans per API key as API Gateway does
 * (local/gateway.ts, usagePlanMeter). Every Free key here is metered by the
 * same pooled key (a pool of one per plan), so whatever that key's usage plan
 * limits, the flooder and its neighbours share it. Loopback only; the load is
 * bounded (about 600 requests a run) and its time is the test clock's.
 */
const pool = { prefix: 'isolationtest', keysPerPlan: 1 };
const freePooledKey = pooledMeteringKey(pool.prefix, 'free', 0);
/** The Free pooled key's usage plan, changed by a test once its keys are set up. */
let freePlan: UsagePlanSettings = pooledUsagePlan;
const usagePlanOf = (apiKey: string) => (apiKey === freePooledKey ? freePlan : undefined);

/** What a pooled key's usage plan was before (sized for the customers it carries), scaled down: 2/s, burst 10, 100 a day. */
const sharedLimitsScaledDown: UsagePlanSettings = { throttle: { rateLimit: 2, burstLimit: 10 }, quota: { limit: 100 } };

const operationInvocations = (api: TestApi) => routes.reduce((sum, route) => sum + api.functions[route.operationId]!.invocations, 0);
const codeOf = async (response: Response) => ((await response.json()) as { code: string }).code;

/** Bans a key the way the operation's limiter does: it keeps calling after its 429s. */
async function banByCalling(api: TestApi, key: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const response = await api.call('/pets', { key });
    if (response.status === 429 && (await codeOf(response)) === 'key_suspended') return;
  }
  throw new Error('the key was never suspended');
}

interface FloodOutcome {
  /** Operation invocations during the flood. */
  operations: number;
  neighbours: { status: number; code?: string }[];
  flooder: number[];
  banned: string[];
  revoked: number[];
  unknown: number[];
}

/**
 * 12 seconds of test time from 10:00:00: each second five Free neighbours send
 * one request each (60 a minute: their full contract rate), while one Free key
 * sends 10 (120 in all: past its own 60 a minute, and past the scaled plan's
 * rate, burst and daily quota: 34 and 100), and a banned, a revoked and an
 * unknown key as many each.
 */
async function flood(plan: UsagePlanSettings): Promise<FloodOutcome> {
  const clock = new TestClock(Date.parse(testInstant(1, '09:52:00')));
  freePlan = pooledUsagePlan;
  const api = await startTestApi({ clock, meteringPool: pool, usagePlanOf });
  try {
    const neighbours = await Promise.all(Array.from({ length: 5 }, () => api.issueKey('free')));
    const [flooder, banned, revoked] = [await api.issueKey('free'), await api.issueKey('free'), await api.issueKey('free')];
    const unknown = generateApiKey({ plan: 'free', owner: 'nobody', now: clock.now }).secret;
    await banByCalling(api, banned);
    await api.call('/pets', { key: revoked });
    await revokeInKeyTable(api.dependencies, revoked);
    clock.now = Date.parse(testInstant(1, '10:00:00'));
    freePlan = plan;
    const outcome: FloodOutcome = {
      operations: -operationInvocations(api),
      neighbours: [],
      flooder: [],
      banned: [],
      revoked: [],
      unknown: [],
    };
    const sends = (key: string, count: number) => Promise.all(Array.from({ length: count }, () => api.call('/pets', { key })));
    for (let second = 0; second < 12; second++) {
      const [fromNeighbours, fromFlooder, fromBanned, fromRevoked, fromUnknown] = await Promise.all([
        Promise.all(neighbours.map((key) => sends(key, 1))).then((answers) => answers.flat()),
        sends(flooder, 10),
        sends(banned, 10),
        sends(revoked, 10),
        sends(unknown, 10),
      ]);
      for (const response of fromNeighbours)
        outcome.neighbours.push({ status: response.status, code: response.ok ? undefined : await codeOf(response) });
      outcome.flooder.push(...fromFlooder.map((response) => response.status));
      for (const response of fromBanned) outcome.banned.push(`${response.status} ${await codeOf(response)}`);
      outcome.revoked.push(...fromRevoked.map((response) => response.status));
      outcome.unknown.push(...fromUnknown.map((response) => response.status));
      clock.advance(1000);
    }
    outcome.operations += operationInvocations(api);
    return outcome;
  } finally {
    await api.close();
  }
}

describe('one Free key floods its pooled key; five neighbours on the same pooled key send their full contract rate', () => {
  it('with the usage plan the stack gives pooled keys, every neighbour request is answered as with no flood', async () => {
    const outcome = await flood(pooledUsagePlan);
    expect(outcome.neighbours).toHaveLength(60);
    // No gateway 429 (rate_limited, quota_exceeded), no 5xx: every neighbour request succeeds, as it does with no flood.
    expect(outcome.neighbours.filter(({ status }) => status !== 200)).toEqual([]);
    // The flood went past everything the scaled-down shared plan would have allowed, and past the flooder's own contract.
    expect(outcome.flooder).toHaveLength(120);
    expect(outcome.flooder.filter((status) => status === 200)).toHaveLength(60);
    expect(outcome.flooder.every((status) => status === 200 || status === 429)).toBe(true);
    expect(outcome.banned).toHaveLength(120);
    expect(new Set(outcome.banned)).toEqual(new Set(['429 key_suspended']));
    expect(new Set([...outcome.revoked, ...outcome.unknown])).toEqual(new Set([401]));
    // Only the neighbours and the flooder ran an operation: the banned, revoked and unknown keys were refused before any.
    expect(outcome.operations).toBe(outcome.neighbours.length + outcome.flooder.length);
  }, 120_000);

  it('with a limit on the shared pooled key (the design before), the same flood refuses the neighbours: the test can see it', async () => {
    const outcome = await flood(sharedLimitsScaledDown);
    const refused = outcome.neighbours.filter(({ status }) => status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every(({ status, code }) => status === 429 && (code === 'rate_limited' || code === 'quota_exceeded'))).toBe(true);
  }, 120_000);
});

describe('a key the authorizer knows to be refused costs no operation Lambda', () => {
  let api: TestApi;
  const clock = new TestClock(Date.parse(testInstant(2, '09:00:00')));
  beforeAll(async () => {
    api = await startTestApi({ clock });
  });
  afterAll(() => api.close());

  it(`a banned key: refused at the gateway (429 key_suspended, Retry-After) while its ban outlasts the cache TTL (${authorizer.resultsCacheTtlSeconds} s), by the operation for its last minutes, never after it`, async () => {
    const key = await api.issueKey('free');
    clock.now = Date.parse(testInstant(2, '09:00:00'));
    await banByCalling(api, key);
    const bannedUntil = Date.parse(testInstant(2, '09:15:00'));

    // Past the cached Allow (09:00:00 + TTL): the authorizer reads the ban, 10 minutes left, and denies.
    clock.now = Date.parse(testInstant(2, '09:05:00'));
    const before = operationInvocations(api);
    const refusals = await Promise.all(Array.from({ length: 20 }, () => api.call('/pets', { key })));
    for (const response of refusals) {
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe(String(authorizer.resultsCacheTtlSeconds));
      expect(await codeOf(response)).toBe('key_suspended');
    }
    expect(operationInvocations(api)).toBe(before);

    // The cached Deny ends at 09:10:00; from then on the ban no longer outlasts a cached answer: the operation answers, with the exact wait.
    clock.now = Date.parse(testInstant(2, '09:10:00'));
    const last = await api.call('/pets', { key });
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBe((bannedUntil - clock.now) / 1000);
    expect(await codeOf(last)).toBe('key_suspended');
    expect(operationInvocations(api)).toBe(before + 1);

    // The ban's end: answered at once.
    clock.now = bannedUntil;
    expect((await api.call('/pets', { key })).status).toBe(200);
  });

  it('a revoked or an expired key: 401 unauthorized with WWW-Authenticate: Bearer, and no operation runs', async () => {
    clock.now = Date.parse(testInstant(3, '09:00:00'));
    const [revoked, expiring] = [await api.issueKey('pro'), await api.issueKey('pro')];
    for (const key of [revoked, expiring]) expect((await api.call('/pets', { key })).status).toBe(200);
    await revokeInKeyTable(api.dependencies, revoked);
    await api.dependencies.db.send(
      new UpdateCommand({
        TableName: api.dependencies.tableNames.apiKeys,
        Key: { keyHash: hashApiKey(expiring) },
        UpdateExpression: 'SET expiresAt = :at',
        ExpressionAttributeValues: { ':at': new Date(clock.now + 1000).toISOString() },
      }),
    );
    clock.advance(authorizer.resultsCacheTtlSeconds * 1000);
    const before = operationInvocations(api);
    for (const key of [revoked, expiring]) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => api.call('/pets', { key })));
      for (const response of answers) {
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
        expect(await codeOf(response)).toBe('unauthorized');
      }
    }
    expect(operationInvocations(api)).toBe(before);
  });
});
