import { functionTimeoutSeconds } from '../../definitions/routes';
import { TIME_BUDGET_GUARD_MS } from '../../functions/runtime/dependencies';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { beforeGetPetSunset, TestClock, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy, type FaultKind, faultKinds, type LandedFaultKind, landedFaultKinds } from '../support/dynamodb-fault-proxy';

/**
 * Every fault mode of the proxy × every DynamoDB call of every operation, the
 * authorizer's key lookup included, each on both SDK attempts: never a 500,
 * never an answer later than the function's timeout minus its guard, a 503
 * always with Retry-After, and the counters charge exactly the requests
 * docs/clients.md says are charged (all but 429 and 503). A tighter SDK budget
 * than the deployed one (the same shape, shorter waits) keeps the sweep short;
 * test/integration/answer-faults.test.ts covers the deployed budget.
 */
const FREE_PER_MINUTE = 60;
const LATEST_ANSWER_MS = functionTimeoutSeconds * 1000 - TIME_BUDGET_GUARD_MS;
const BUDGET = { connectionTimeoutMs: 300, requestTimeoutMs: 400, maxAttempts: 2 };
/** For `late`: longer than the request timeout, so the SDK gives up on a call that landed. */
const LATE_MS = 600;

let proxy: DynamoDbFaultProxy;
let api: TestApi;

beforeAll(async () => {
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
  api = await startTestApi({ dynamoEndpoint: proxy.endpoint, dynamoCallBudget: BUDGET, authorizerCacheTtlSeconds: 0 });
});
afterAll(async () => {
  await api.close();
  await proxy.close();
});
afterEach(() => {
  proxy.clear();
  api.clock.now = new TestClock().now;
});

const tables = () => api.dependencies.tableNames;
const keyed = (name: string): RequestInit => {
  const init = postJson({ name, categoryId: 1 });
  return { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': `"${name}"` } };
};

/** Each call site: the request that makes it, and the DynamoDB call (operation, table) that gets the fault. */
const callSites: [string, string, () => string, (name: string) => [string, RequestInit]][] = [
  ["authorizer's key lookup", 'GetItem', () => tables().apiKeys, () => ['/pets?limit=1', {}]],
  ['rate-limit count', 'UpdateItem', () => tables().rateLimits, () => ['/pets?limit=1', {}]],
  ['listPets query', 'Query', () => tables().pets, () => ['/pets?limit=1', {}]],
  ['getPet read', 'GetItem', () => tables().pets, () => ['/pets/1', {}]],
  ['createPet write (no key)', 'PutItem', () => tables().pets, (name) => ['/pets', postJson({ name, categoryId: 1 })]],
  ['createPet claim (Idempotency-Key)', 'PutItem', () => tables().idempotency, (name) => ['/pets', keyed(name)]],
  ['createPet completion mark', 'UpdateItem', () => tables().idempotency, (name) => ['/pets', keyed(name)]],
];

describe.each<FaultKind | LandedFaultKind>([...faultKinds, ...landedFaultKinds])('fault "%s"', (kind) => {
  it.each(callSites)(
    'on both attempts of the %s: no 500, answered in time, charged as documented',
    async (site, operation, table, request) => {
      api.clock.now = beforeGetPetSunset;
      const key = await api.issueKey('free');
      const [path, init] = request(`sweep-${kind}-${site.replace(/\W+/g, '-')}`);
      proxy.inject({ kind, operation, table: table(), times: 2, delayMs: LATE_MS });
      const started = Date.now();
      const response = await api.call(path, { ...init, key });
      const elapsedMs = Date.now() - started;
      expect(proxy.calls.some((call) => call.fault === kind)).toBe(true);
      expect(response.status).not.toBe(500);
      expect([200, 201, 404, 503]).toContain(response.status);
      if (response.status === 503) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(elapsedMs).toBeLessThan(LATEST_ANSWER_MS);

      proxy.clear();
      const clean = await api.call('/pets?limit=1', { key });
      expect(clean.status).toBe(200);
      const charged = (response.status === 503 ? 0 : 1) + 1;
      expect(Number(clean.headers.get('x-ratelimit-remaining'))).toBe(FREE_PER_MINUTE - charged);
    },
  );
});
