import { errorCodes } from '../../definitions/error-codes';
import { MAX_ID } from '../../definitions/fields/pet-fields';
import { signedCursor } from '../../functions/domain/cursor';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { beforeGetPetSunset } from '../support/dynamo';

/**
 * The API over real HTTP, through the local gateway and the real handlers, on
 * DynamoDB Local: every status the interface lists for every operation, and
 * the decisions of docs/decisions.md.
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toEqual({ code, message: expect.any(String), status });
  expect(errorCodes[code as keyof typeof errorCodes].status).toBe(status);
  return body as { code: string; message: string; status: number };
}

async function createPet(body: unknown = { name: 'Rex', categoryId: 1 }) {
  const response = await api.call('/pets', postJson(body));
  expect(response.status).toBe(201);
  return (await response.json()) as { id: number; name: string; categoryId: number; status: string };
}

describe('POST /v1/pets (createPet)', () => {
  it('creates a pet with an assigned id and the default status "available"', async () => {
    const response = await api.call('/pets', postJson({ name: 'Rex', categoryId: 7 }));
    expect(response.status).toBe(201);
    const pet = (await response.json()) as { id: number };
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7, status: 'available' });
    expect(Number.isSafeInteger(pet.id) && pet.id >= 1).toBe(true);
    // RFC 9110, section 15.3.2: the URL of the pet, which answers with that pet.
    expect(response.headers.get('Location')).toBe(`${api.url}/pets/${pet.id}`);
    expect(await (await api.call(new URL(response.headers.get('Location') ?? '').pathname.replace(/^\/v1/, ''))).json()).toEqual(pet);
  });

  it('keeps the status sent', async () => {
    expect((await createPet({ name: 'Tom', categoryId: 2, status: 'sold' })).status).toBe('sold');
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: '   ', categoryId: 1 }, 'name'],
    [{ name: 'a'.repeat(101), categoryId: 1 }, 'name'],
    [{ name: 'bell\u0007', categoryId: 1 }, 'name'],
    [{ name: 7, categoryId: 1 }, 'name'],
    [{ categoryId: 1 }, 'name'],
    [{ name: 'Rex' }, 'categoryId'],
    [{ name: 'Rex', categoryId: '1' }, 'categoryId'],
    [{ name: 'Rex', categoryId: 0 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1.5 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 9007199254740992 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1, status: 'lost' }, 'status'],
    [{ name: 'Rex', categoryId: 1, id: 5 }, 'id'],
    [[], 'object'],
  ])('answers 400 naming the field for %j, and creates nothing', async (body, field) => {
    const before = await listAllIds();
    const error = await expectError(await api.call('/pets', postJson(body)), 400, 'invalid_request');
    expect(error.message).toContain(field);
    expect(await listAllIds()).toEqual(before);
  });

  it('accepts a name of exactly 100 characters counted as Unicode code points', async () => {
    const name = '🐶'.repeat(100);
    expect((await createPet({ name, categoryId: 1 })).name).toBe(name);
  });

  it('takes a name of only a private-use character (U+E000) or only an unassigned code point (U+0378): both count as visible (decision 2)', async () => {
    for (const name of ['\ue000', '\u0378']) expect((await createPet({ name, categoryId: 1 })).name).toBe(name);
  });

  it('answers 400 for malformed JSON and for a missing body', async () => {
    await expectError(
      await api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":' }),
      400,
      'invalid_request',
    );
    await expectError(await api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' } }), 400, 'invalid_request');
  });

  it('answers 415 when the body is not declared as JSON', async () => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    await expectError(
      await api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body }),
      415,
      'unsupported_media_type',
    );
    const accepted = await api.call('/pets', { method: 'POST', headers: { 'content-type': 'Application/JSON; charset=utf-8' }, body });
    expect(accepted.status).toBe(201);
  });

  it('answers 413 for a body over 16 KiB', async () => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1, padding: 'x'.repeat(16 * 1024) });
    await expectError(
      await api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }),
      413,
      'payload_too_large',
    );
  });
});

describe('GET /v1/pets (listPets)', () => {
  it('lists pets in ascending id order, including a new one', async () => {
    const created = await createPet({ name: 'Listed', categoryId: 3 });
    const ids = await listAllIds();
    expect(ids).toContain(created.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('filters by status', async () => {
    const pending = await createPet({ name: 'Waiting', categoryId: 1, status: 'pending' });
    const response = await api.call('/pets?status=pending&limit=100');
    const pets = (await response.json()) as { id: number; status: string }[];
    expect(pets.map((pet) => pet.id)).toContain(pending.id);
    expect(pets.every((pet) => pet.status === 'pending')).toBe(true);
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=', 'limit=1.5', 'limit=-1', 'status=lost', 'status=AVAILABLE', 'cursor=garbage'])(
    'answers 400 naming the parameter for %s',
    async (query) => {
      const error = await expectError(await api.call(`/pets?${query}`), 400, 'invalid_request');
      expect(error.message).toContain(query.split('=')[0]);
    },
  );

  it.each(['limit=abc&limit=1', 'limit=1&limit=2', 'status=bogus&status=sold', 'status=sold&status=sold', 'cursor=a&cursor=b'])(
    'answers 400 naming the parameter sent twice: %s',
    async (query) => {
      const error = await expectError(await api.call(`/pets?${query}`), 400, 'invalid_request');
      expect(error.message).toBe(`${query.split('=')[0]} must be sent once; it was sent 2 times.`);
    },
  );

  it('reads limit=020 and limit=0020 alike: a 400, as every limit with a leading zero (decision 4)', async () => {
    const answers = await Promise.all(['020', '0020', '01', '0100'].map((limit) => api.call(`/pets?limit=${limit}`)));
    for (const answer of answers) {
      const error = await expectError(answer, 400, 'invalid_request');
      expect(error.message).toMatch(/^limit must be a plain decimal integer from 1 to 100/);
    }
    // The same values without the zeros are fine.
    expect((await api.call('/pets?limit=20')).status).toBe(200);
  });

  it('ignores unknown query parameters', async () => {
    expect((await api.call('/pets?colour=brown')).status).toBe(200);
  });

  it('defaults to 20 pets a page', async () => {
    while ((await listAllIds()).length < 21) await createPet();
    const page = (await (await api.call('/pets')).json()) as unknown[];
    expect(page).toHaveLength(20);
  });
});

describe('GET /v1/pets/{petId} (getPet, deprecated)', () => {
  // Before its sunset, whatever today's date; nothing here counts on rate-limit counts.
  let saved: number;
  beforeEach(() => {
    saved = api.clock.now;
    api.clock.now = beforeGetPetSunset;
  });
  afterEach(() => {
    api.clock.now = saved;
  });

  it('returns the pet with Deprecation, Sunset and a successor Link', async () => {
    const created = await createPet({ name: 'Fetch me', categoryId: 4 });
    const response = await api.call(`/pets/${created.id}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(created);
    expect(response.headers.get('deprecation')).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
    expect(response.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(response.headers.get('link')).toBe(`<${api.url}/pets>; rel="successor-version"`);
  });

  it('answers 404 for an unknown id, with the deprecation headers', async () => {
    const response = await api.call('/pets/987654321');
    await expectError(response, 404, 'not_found');
    expect(response.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
  });

  it.each(['abc', '0', '-1', '1.5', '01', '9007199254740992', '99999999999999999999', '%20'])(
    'answers 400 naming petId for %s',
    async (petId) => {
      const error = await expectError(await api.call(`/pets/${petId}`), 400, 'invalid_request');
      expect(error.message).toContain('petId');
    },
  );

  it('answers 410 gone from the sunset instant on, and 200 just before it', async () => {
    const created = await createPet();
    const saved = api.clock.now;
    try {
      api.clock.set('2030-12-04T23:59:59.999Z');
      expect((await api.call(`/pets/${created.id}`)).status).toBe(200);
      api.clock.set('2030-12-05T00:00:00.000Z');
      const response = await api.call(`/pets/${created.id}`);
      await expectError(response, 410, 'gone');
      expect(response.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    } finally {
      api.clock.now = saved;
    }
  });
});

describe('authentication', () => {
  const operations: [string, RequestInit][] = [
    ['/pets', {}],
    ['/pets', postJson({ name: 'Rex', categoryId: 1 })],
    ['/pets/1', {}],
  ];

  it.each(operations)('%s %j without a key → 401 Error object with WWW-Authenticate: Bearer', async (path, init) => {
    const response = await api.call(path, { ...init, key: null });
    await expectError(response, 401, 'unauthorized');
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each([
    ['an unknown key', 'Bearer psk_0000000000000000000000000000000000000000000'],
    ['a malformed key', 'Bearer not-a-key'],
    ['an empty bearer', 'Bearer '],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
  ])('refuses %s with 401', async (_, authorization) => {
    const response = await api.call('/pets', { key: null, headers: { Authorization: authorization } });
    await expectError(response, 401, 'unauthorized');
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('accepts the scheme in any case and one or more spaces, as RFC 6750 section 2.1 and RFC 9110 section 11.1 write it (decision 7)', async () => {
    const key = await api.issueKey();
    for (const authorization of [`Bearer ${key}`, `bEaReR ${key}`, `bearer ${key}`, `Bearer  ${key}`]) {
      expect((await api.call('/pets', { key: null, headers: { Authorization: authorization } })).status).toBe(200);
    }
  });
});

describe('the gateway', () => {
  it.each([
    ['GET', '/v1/owners'],
    ['DELETE', '/v1/pets'],
    ['GET', '/pets'],
    ['GET', '/v1/pets/1/toys'],
  ])('answers %s %s with a 404 Error object, without asking for a key', async (method, path) => {
    const response = await fetch(`${api.url.replace(/\/v1$/, '')}${path}`, { method });
    await expectError(response, 404, 'not_found');
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('pagination (decision 5)', () => {
  it('pages through 45 pets with limit=20 in 3 pages by following Link rel="next", each id once, ascending', async () => {
    const paged = await startTestApi();
    try {
      for (let index = 0; index < 45; index++) {
        const response = await paged.call('/pets', postJson({ name: `Pet ${index}`, categoryId: 1 }));
        expect(response.status).toBe(201);
      }
      const pages: number[][] = [];
      let url: string | undefined = `${paged.url}/pets?limit=20`;
      while (url) {
        const response = await paged.call(url.slice(paged.url.length));
        expect(response.status).toBe(200);
        pages.push(((await response.json()) as { id: number }[]).map((pet) => pet.id));
        url = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1];
      }
      expect(pages.map((page) => page.length)).toEqual([20, 20, 5]);
      const ids = pages.flat();
      expect(new Set(ids).size).toBe(45);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    } finally {
      await paged.close();
    }
  });

  it('refuses a tampered cursor and a cursor reused with another status', async () => {
    const response = await api.call('/pets?limit=1');
    const next = /<([^>]+)>/.exec(response.headers.get('link') ?? '')?.[1];
    expect(next).toBeDefined();
    const cursor = new URL(next as string).searchParams.get('cursor') as string;
    const tampered = cursor.slice(0, -2) + (cursor.endsWith('A') ? 'B' : 'A') + cursor.slice(-1);
    await expectError(await api.call(`/pets?limit=1&cursor=${tampered}`), 400, 'invalid_request');
    await expectError(await api.call(`/pets?limit=1&status=sold&cursor=${cursor}`), 400, 'invalid_request');
    expect((await api.call(`/pets?limit=1&cursor=${cursor}`)).status).toBe(200);
  });
});

/**
 * The cursor's MAC key is in the source (functions/domain/cursor.ts): anyone can
 * sign a cursor, so the MAC shows only that a cursor was not changed by
 * accident. Every field is read as strictly as a query parameter instead
 * (decision 5): a cursor this service could not have issued is a 400 naming
 * `cursor`, signed with that key or not. A signed `afterId` of 2^53−1 was a 503
 * forever (the SDK refuses to send 2^53).
 */
describe('GET /v1/pets with a cursor the service could not have issued', () => {
  const start = () => String(api.clock.now - 1_000).padStart(14, '0');
  const unsigned = (payload: string) => Buffer.concat([Buffer.alloc(12), Buffer.from(payload)]).toString('base64url');
  const payloads: [string, () => string][] = [
    ['afterId 2^53−1', () => `2:${start()}:${MAX_ID}:`],
    ['afterId 0', () => `2:${start()}:0:`],
    ['afterId −1', () => `2:${start()}:-1:`],
    ['an unknown field', () => `2:${start()}:7::colour`],
    ['an unknown status', () => `2:${start()}:7:lost`],
    ['a walk start a day ahead of the clock', () => `2:${String(api.clock.now + 86_400_000).padStart(14, '0')}:7:`],
    ['a walk start before the service existed', () => `2:${String(Date.parse('2025-12-31T23:59:59Z')).padStart(14, '0')}:7:`],
  ];

  it.each(payloads)('%s: 400 naming cursor, signed or not', async (_case, payload) => {
    for (const cursor of [signedCursor(payload()), unsigned(payload())]) {
      const response = await api.call(`/pets?limit=5&cursor=${cursor}`);
      expect(response.headers.get('retry-after')).toBeNull();
      const error = await expectError(response, 400, 'invalid_request');
      expect(error.message).toMatch(/^cursor /);
    }
  });

  it('afterId 2^53−2, the largest a next page can start after: an empty page, not a 503', async () => {
    const response = await api.call(`/pets?limit=5&cursor=${signedCursor(`2:${start()}:${MAX_ID - 1}:`)}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    expect(response.headers.get('link')).toBeNull();
  });
});

async function listAllIds(): Promise<number[]> {
  const ids: number[] = [];
  let path: string | undefined = '/pets?limit=100';
  while (path) {
    const response = await api.call(path);
    ids.push(...((await response.json()) as { id: number }[]).map((pet) => pet.id));
    const next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1];
    path = next?.slice(api.url.length);
  }
  return ids;
}
