import { type Pet, PetStoreClient, type PetStoreClientOptions, PetStoreError, type RetryEvent } from '../../client';
import { startTestApi, type TestApi } from '../support/api';
import { contractCheckedFetch } from '../support/contract';
import { atInstant, beforeGetPetSunset, testInstant } from '../support/dynamo';

/**
 * The typed client (client/) against the local API over real HTTP. Every
 * response it gets is also checked against the OpenAPI document. Waiting is
 * injected: the client's sleep moves the API's TestClock by the time waited,
 * so a 429's minute really passes, in no real time (only a wait after a 409 is real).
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

interface Recorded {
  client: PetStoreClient;
  requests: { method: string; url: string; idempotencyKey: string | null; status?: number }[];
  sleeps: number[];
  retries: RetryEvent[];
}

function clientFor(target: TestApi, apiKey: string, options: Partial<PetStoreClientOptions> = {}): Recorded {
  const requests: Recorded['requests'] = [];
  const sleeps: number[] = [];
  const retries: RetryEvent[] = [];
  const checked = contractCheckedFetch();
  const client = new PetStoreClient({
    baseUrl: target.url,
    apiKey,
    fetch: async (input, init) => {
      const request = new Request(input, init);
      const entry: Recorded['requests'][number] = {
        method: request.method,
        url: request.url,
        idempotencyKey: request.headers.get('idempotency-key'),
      };
      requests.push(entry);
      const response = await checked(request);
      entry.status = response.status;
      return response;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
      target.clock.advance(ms);
      // The idempotency layer expires an in-flight record on real time (the function's
      // remaining time), not on the test's clock: a wait after a 409 must really pass.
      if (retries.at(-1)?.status === 409) await new Promise((resolve) => setTimeout(resolve, ms));
    },
    // Called right before each sleep, so the last event is the one the sleep is for.
    onRetry: (event) => retries.push(event),
    ...options,
  });
  return { client, requests, sleeps, retries };
}

it('lists 45 pets across 3 pages with one for-await loop, following Link rel="next"', async () => {
  const own = await startTestApi();
  try {
    const { client, requests } = clientFor(own, await own.issueKey('business'));
    for (let index = 0; index < 45; index++) await client.createPet({ name: `Pet ${index}`, categoryId: 1 });

    const seen: Pet[] = [];
    for await (const pet of client.allPets({ limit: 20 })) seen.push(pet);

    expect(seen).toHaveLength(45);
    const ids = seen.map((pet) => pet.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(45);
    const pageRequests = requests.filter((request) => request.method === 'GET');
    expect(pageRequests).toHaveLength(3);
    expect(new URL(pageRequests[1]?.url as string).searchParams.get('cursor')).toBeTruthy();
  } finally {
    await own.close();
  }
});

it('creates 80 pets in one burst on a Free key (60 a minute) with no error, waiting out each 429 for its Retry-After', async () => {
  const own = await startTestApi();
  try {
    own.clock.set(testInstant(0, '09:00:10'));
    const startedAt = own.clock.now;
    const { client, requests, sleeps, retries } = clientFor(own, await own.issueKey('free'));

    const created = await Promise.all(
      Array.from({ length: 80 }, (_, index) => client.createPet({ name: `Burst ${index}`, categoryId: 2 })),
    );

    expect(created).toHaveLength(80);
    expect(new Set(created.map((pet) => pet.id)).size).toBe(80);
    // Exactly 80 pets exist: no retried create made a second one.
    const { client: reader } = clientFor(own, await own.issueKey('business'));
    const all: Pet[] = [];
    for await (const pet of reader.allPets({ limit: 100 })) all.push(pet);
    expect(all).toHaveLength(80);

    // The limit was hit, and every wait after a 429 was its Retry-After, never less.
    const refusals = retries.filter((event) => event.status === 429);
    expect(refusals.length).toBeGreaterThan(0);
    expect(requests.filter((request) => request.status === 429)).toHaveLength(refusals.length);
    for (const event of refusals) {
      expect(event).toMatchObject({ operation: 'createPet', code: 'rate_limited', reason: 'retry-after' });
      expect(event.retryAfterSeconds).toBeGreaterThan(0);
      expect(event.waitMs).toBe((event.retryAfterSeconds as number) * 1000);
    }
    expect(sleeps).toEqual(retries.map((event) => event.waitMs));
    // The first refusal came in the first minute and asked to wait for its end (50 s).
    expect(refusals[0]?.retryAfterSeconds).toBe(50);
    expect(own.clock.now).toBeGreaterThanOrEqual(startedAt + 50_000);
    // Never suspended, and never more refusals than the ban threshold.
    expect(retries.some((event) => event.code === 'key_suspended')).toBe(false);
    expect(refusals.length).toBeLessThan(60);
    // Each create kept one Idempotency-Key across its attempts, and no two creates shared one.
    const creates = requests.filter((request) => request.method === 'POST');
    expect(new Set(creates.map((request) => request.idempotencyKey)).size).toBe(80);
    expect(creates.every((request) => /^"[0-9a-f-]{36}"$/.test(request.idempotencyKey ?? ''))).toBe(true);
  } finally {
    await own.close();
  }
});

it('retries a create whose response was lost with the same Idempotency-Key, and the API replays it: one pet', async () => {
  let lost = false;
  const checked = contractCheckedFetch();
  const { client, sleeps } = clientFor(api, await api.issueKey('business'), {
    random: () => 0.5,
    fetch: async (input, init) => {
      const response = await checked(new Request(input, init));
      // The API created the pet, but the answer never reached the client.
      if (!lost) {
        lost = true;
        throw new TypeError('fetch failed');
      }
      return response;
    },
  });
  const before = await countPets();
  const pet = await client.createPet({ name: 'Lost answer', categoryId: 3 });
  expect(pet).toMatchObject({ name: 'Lost answer', categoryId: 3, status: 'available' });
  expect(sleeps).toEqual([100]); // full jitter: 0.5 × min(cap, 200 ms × 2^0)
  expect(await countPets()).toBe(before + 1);
});

it('throws a typed PetStoreError with the Error object, the status and the headers, without retrying a 4xx', async () => {
  const { client, requests } = clientFor(api, await api.issueKey('pro'));
  const invalid = await client.createPet({ name: '', categoryId: 1 }).catch((error: unknown) => error);
  expect(invalid).toBeInstanceOf(PetStoreError);
  const error = invalid as PetStoreError;
  expect(error.status).toBe(400);
  expect(error.error).toEqual({ code: 'invalid_request', message: expect.stringContaining('name'), status: 400 });
  expect(error.code).toBe('invalid_request');
  expect(error.headers.get('x-ratelimit-limit')).toBe('300');
  expect(requests).toHaveLength(1);

  await atInstant(api.clock, beforeGetPetSunset, () =>
    expect(client.getPet(987654321)).rejects.toMatchObject({ status: 404, code: 'not_found' }),
  );
  const stranger = clientFor(api, 'psk_0000000000000000000000000000000000000000000').client;
  const unauthorized = (await stranger.listPets().catch((caught: unknown) => caught)) as PetStoreError;
  expect(unauthorized).toMatchObject({ status: 401, code: 'unauthorized' });
  expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');
});

it('gets a pet by id (the deprecated operation) as the same object', async () => {
  const { client } = clientFor(api, await api.issueKey('business'));
  const created = await client.createPet({ name: 'By id', categoryId: 4, status: 'pending' });
  expect(await atInstant(api.clock, beforeGetPetSunset, () => client.getPet(created.id))).toEqual(created);
});

async function countPets(): Promise<number> {
  const { client } = clientFor(api, await api.issueKey('business'));
  let count = 0;
  for await (const _ of client.allPets({ limit: 100 })) count++;
  return count;
}
