import { countPets, postJson, startTestApi, type TestApi } from '../support/api';

/** Decision 11: Idempotency-Key on POST /v1/pets, over HTTP on DynamoDB Local. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const withKey = (key: string, body: unknown, apiKey?: string) => {
  const init = postJson(body);
  return { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': `"${key}"` }, key: apiKey };
};

it('answers a retry with the same key and body with the original 201, creating nothing', async () => {
  const before = await countPets(api);
  const first = await api.call('/pets', withKey('retry-1', { name: 'Once', categoryId: 1 }));
  const second = await api.call('/pets', withKey('retry-1', { name: 'Once', categoryId: 1 }));
  expect(first.status).toBe(201);
  expect(second.status).toBe(201);
  expect(await second.json()).toEqual(await first.json());
  expect(await countPets(api)).toBe(before + 1);
});

it('refuses the same key with another body with 422 idempotency_key_reused', async () => {
  expect((await api.call('/pets', withKey('reused-1', { name: 'A', categoryId: 1 }))).status).toBe(201);
  const reused = await api.call('/pets', withKey('reused-1', { name: 'B', categoryId: 1 }));
  expect(reused.status).toBe(422);
  expect(await reused.json()).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
});

it('keeps keys of different API keys apart', async () => {
  const otherClient = await api.issueKey('business');
  const mine = (await (await api.call('/pets', withKey('shared-name', { name: 'Mine', categoryId: 1 }))).json()) as { id: number };
  const theirs = await api.call('/pets', withKey('shared-name', { name: 'Theirs', categoryId: 1 }, otherClient));
  expect(theirs.status).toBe(201);
  expect(((await theirs.json()) as { id: number }).id).not.toBe(mine.id);
});

it('turns 50 concurrent POSTs with one key into exactly one pet; the rest are identical 201 replays or 409', async () => {
  const before = await countPets(api);
  const responses = await Promise.all(
    Array.from({ length: 50 }, () => api.call('/pets', withKey('burst-1', { name: 'Burst', categoryId: 2 }))),
  );
  const statuses = responses.map((response) => response.status);
  expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
  const created = await Promise.all(responses.filter((response) => response.status === 201).map((response) => response.json()));
  expect(created.length).toBeGreaterThanOrEqual(1);
  expect(new Set(created.map((pet) => JSON.stringify(pet))).size).toBe(1);
  for (const response of responses.filter((candidate) => candidate.status === 409)) {
    expect(await response.json()).toMatchObject({ code: 'request_in_progress', status: 409 });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  }
  expect(await countPets(api)).toBe(before + 1);
});

it('does not remember a refused request: a 400 with a key leaves the key free', async () => {
  const invalid = await api.call('/pets', withKey('after-400', { name: '', categoryId: 1 }));
  expect(invalid.status).toBe(400);
  expect((await api.call('/pets', withKey('after-400', { name: 'Valid', categoryId: 1 }))).status).toBe(201);
});

it.each(['""', '"has space"', 'x'.repeat(256), '"é"'])('refuses the malformed Idempotency-Key %s with 400', async (value) => {
  const init = postJson({ name: 'Rex', categoryId: 1 });
  const response = await api.call('/pets', { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': value } });
  expect(response.status).toBe(400);
  expect(((await response.json()) as { message: string }).message).toContain('Idempotency-Key');
});
