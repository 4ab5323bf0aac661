import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_CALL_BUDGET } from '../../functions/runtime/dependencies';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { beforeGetPetSunset, TestClock, testDocumentClient, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy, type FaultKind, type FaultRule, faultKinds } from '../support/dynamodb-fault-proxy';

/**
 * Every fault of the proxy — an answer that comes after the SDK gave up, an
 * answer lost after the write landed, a reset, a 500, both kinds of
 * throttling — on each operation's own DynamoDB call and on its rate-limit
 * counter, through real HTTP, with the deployed SDK budget (1 s per attempt, 2
 * attempts). The client retries until it succeeds, as ours does. Then:
 * exactly one pet per Idempotency-Key, every 201 naming it; no 5xx claims
 * "nothing was changed" beside a pet it made; and once the faults are gone,
 * X-RateLimit-Remaining = limit - the requests answered with neither 429 nor 503.
 */
const FREE_PER_MINUTE = 60;
const MAX_ATTEMPTS = 6;
/** Longer than the SDK's 1 s request timeout: the write lands, the SDK has given up on it. */
const LATE_MS = 1_300;

let proxy: DynamoDbFaultProxy;
let api: TestApi;
let direct: DynamoDBDocumentClient;

beforeAll(async () => {
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
  api = await startTestApi({ dynamoEndpoint: proxy.endpoint, dynamoCallBudget: DYNAMODB_CALL_BUDGET });
  direct = testDocumentClient();
});
afterAll(async () => {
  await api.close();
  await proxy.close();
  direct.destroy();
});
afterEach(() => proxy.clear());
// The get tests move the clock before getPet's sunset; every other test runs at the default instant.
afterEach(() => {
  api.clock.now = new TestClock().now;
});

interface Answer {
  status: number;
  body: { id?: number; name?: string; code?: string; message?: string };
  remaining: number | undefined;
}

async function send(path: string, key: string, init: RequestInit = {}): Promise<Answer> {
  const response = await api.call(path, { ...init, key });
  const remaining = response.headers.get('x-ratelimit-remaining');
  return {
    status: response.status,
    body: (await response.json()) as Answer['body'],
    remaining: remaining === null ? undefined : Number(remaining),
  };
}

/** Sends until an answer is neither a 5xx nor a 409 (or MAX_ATTEMPTS), as a retrying client does. */
async function untilServed(request: (attempt: number) => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const answer = await request(attempt);
    answers.push(answer);
    if (answer.status < 500 && answer.status !== 409) break;
  }
  return answers;
}

async function petsNamed(name: string): Promise<{ id: number }[]> {
  const { Items = [] } = await direct.send(
    new ScanCommand({
      TableName: api.dependencies.tableNames.pets,
      FilterExpression: '#name = :name',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: { ':name': name },
    }),
  );
  return Items as { id: number }[];
}

const tables = () => api.dependencies.tableNames;
/** The operation's own call fails on both SDK attempts of its first request; the counter's first attempt fails too. */
function faults(kind: FaultKind, operation: string, extra: FaultRule[] = [], times = 2): FaultRule[] {
  return [
    { kind, operation, table: tables().pets, times, delayMs: LATE_MS },
    { kind, operation: 'UpdateItem', table: tables().rateLimits, times: 1, delayMs: LATE_MS },
    ...extra,
  ];
}

/** After the faults: one clean request; its Remaining must show exactly the requests answered with neither 429 nor 503. */
async function expectChargedExactly(key: string, answers: Answer[]): Promise<void> {
  proxy.clear();
  const clean = await send('/pets?limit=1', key);
  expect(clean.status).toBe(200);
  const charged = [...answers, clean].filter((answer) => answer.status !== 429 && answer.status !== 503).length;
  expect(clean.remaining).toBe(FREE_PER_MINUTE - charged);
}

const claimsNothingChanged = (answer: Answer) => answer.status >= 500 && /nothing was changed/i.test(answer.body.message ?? '');

describe.each(faultKinds)('fault "%s"', (kind) => {
  it('create with an Idempotency-Key: exactly one pet, every 201 names it', async () => {
    const key = await api.issueKey('free');
    const name = `keyed-${kind}`;
    proxy.inject(...faults(kind, 'PutItem', [{ kind, operation: 'PutItem', table: tables().idempotency, times: 1, delayMs: LATE_MS }]));
    const request = () => {
      const init = postJson({ name, categoryId: 1 });
      return send('/pets', key, { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': `"${kind}-1"` } });
    };
    const answers = await untilServed(request);
    // One more retry after the success: a replay, not a second pet.
    answers.push(await request());
    const pets = await petsNamed(name);
    expect(pets).toHaveLength(1);
    const created = answers.filter((answer) => answer.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(2);
    for (const answer of created) expect(answer.body).toMatchObject({ id: Number(pets[0]!.id), name });
    expect(answers.filter(claimsNothingChanged)).toEqual([]);
    expect(proxy.calls.some((call) => call.fault === kind)).toBe(true);
    await expectChargedExactly(key, answers);
  });

  it('create without a key: a 5xx never says "nothing was changed" beside a pet it made', async () => {
    const key = await api.issueKey('free');
    // Only the SDK's first attempt fails: its retry (finding our own pet, when the first landed) is a 201.
    proxy.inject(...faults(kind, 'PutItem', [], 1));
    const once = await send('/pets', key, postJson({ name: `unkeyed-${kind}-once`, categoryId: 1 }));
    expect(once.status).toBe(201);
    expect((await petsNamed(`unkeyed-${kind}-once`)).map((pet) => Number(pet.id))).toEqual([once.body.id]);

    // Both attempts fail: a 503 that says what is known.
    proxy.inject(...faults(kind, 'PutItem'));
    // A name per attempt tells which attempt made which pet.
    const answers = await untilServed((attempt) => send('/pets', key, postJson({ name: `unkeyed-${kind}-${attempt}`, categoryId: 1 })));
    expect(answers.at(-1)!.status).toBe(201);
    for (const [attempt, answer] of answers.entries()) {
      const pets = await petsNamed(`unkeyed-${kind}-${attempt}`);
      if (answer.status === 201) expect(pets.map((pet) => Number(pet.id))).toEqual([answer.body.id]);
      else {
        expect(answer.status).toBe(503);
        expect(pets.length).toBeLessThanOrEqual(1);
        if (pets.length === 1) expect(answer.body.message).toMatch(/unknown whether the pet was created.*Idempotency-Key/);
        expect(claimsNothingChanged(answer) && pets.length > 0).toBe(false);
      }
    }
    await expectChargedExactly(key, [once, ...answers]);
  });

  it('list: served after the faults, each request charged at most once, 503s not at all', async () => {
    const key = await api.issueKey('free');
    proxy.inject(...faults(kind, 'Query'));
    const answers = await untilServed(() => send('/pets?limit=5', key));
    expect(answers.at(-1)!.status).toBe(200);
    for (const answer of answers.slice(0, -1)) {
      expect(answer.body).toMatchObject({ code: 'service_unavailable' });
      // Not charged, and its headers say so.
      if (answer.remaining !== undefined) expect(answer.remaining).toBe(FREE_PER_MINUTE);
    }
    await expectChargedExactly(key, answers);
  });

  it('get: served after the faults, each request charged at most once, 503s not at all', async () => {
    // getPet works only before its sunset: a clock before it, whatever today's date.
    api.clock.now = beforeGetPetSunset;
    const key = await api.issueKey('free');
    const pet = await send('/pets', key, postJson({ name: `target-${kind}`, categoryId: 1 }));
    expect(pet.status).toBe(201);
    proxy.inject(...faults(kind, 'GetItem'));
    const answers = await untilServed(() => send(`/pets/${pet.body.id}`, key));
    expect(answers.at(-1)).toMatchObject({ status: 200, body: { id: pet.body.id } });
    await expectChargedExactly(key, [pet, ...answers]);
  });
});

it('a first PutItem on the pets table answered 2.5 s late: a create with Idempotency-Key k1 retried until it succeeds leaves exactly one pet', async () => {
  const key = await api.issueKey('free');
  proxy.inject({ kind: 'late', operation: 'PutItem', table: tables().pets, times: 1, delayMs: 2_500 });
  const init = postJson({ name: 'Late Rex', categoryId: 1 });
  const answers = await untilServed(() =>
    send('/pets', key, { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': '"k1"' } }),
  );
  expect(answers.at(-1)!.status).toBe(201);
  expect(await petsNamed('Late Rex')).toHaveLength(1);
  expect(proxy.forwarded('PutItem', tables().pets).length).toBeGreaterThanOrEqual(2);
});
