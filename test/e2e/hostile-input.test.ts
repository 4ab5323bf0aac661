import fc from 'fast-check';
import { errorCodes } from '../../definitions/error-codes';
import { countPets, startTestApi, type TestApi } from '../support/api';
import { atInstant, beforeGetPetSunset } from '../support/dynamo';
import { forbiddenCharacter as forbidden, invisibleCharacter as invisible } from '../support/unreadable-characters';

/**
 * Hostile input, property-based, over real HTTP: whatever the body, query,
 * path or Authorization header, the answer is never a 5xx, every error is a
 * valid Error object, and a refused request writes nothing.
 * PROPERTY_RUNS raises the number of cases (e.g. 20000 for a nightly run).
 */
const runs = Number(process.env.PROPERTY_RUNS ?? 1000);
let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await startTestApi();
  // Limits far above what the properties send: refusals here would hide the answers under test.
  key = await api.issueKey('enterprise', { perMinute: 1_000_000, perDay: 100_000_000 });
});
afterAll(() => api.close());

const errorCodeSet = new Set(Object.keys(errorCodes));

async function expectWellFormed(response: Response, allowed: number[]): Promise<unknown> {
  expect(response.status).toBeLessThan(500);
  expect(allowed).toContain(response.status);
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status >= 400) {
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
    expect(errorCodeSet.has(body.code as string)).toBe(true);
    expect(body.status).toBe(response.status);
    expect(errorCodes[body.code as keyof typeof errorCodes].status).toBe(response.status);
    expect(typeof body.message).toBe('string');
    // No internals: no stack frames, file paths or table names.
    expect(body.message).not.toMatch(/\bat \S+:\d+|\.ts\b|node_modules|Exception|test-[0-9a-f]{8}/);
  }
  return body;
}

/** Any value as text; String() would throw on objects like {"toString":1}. */
const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined'));

const nasty = fc.oneof(
  fc.constantFrom(
    -0,
    0,
    1e308,
    -1e308,
    1.5,
    2 ** 53,
    2 ** 63,
    Number.MAX_SAFE_INTEGER,
    'NaN',
    'Infinity',
    '-0',
    '1',
    '',
    ' ',
    '\u0000',
    '\u202e',
    '🐶',
    null,
    true,
    [],
    {},
  ),
  fc.string({ unit: 'binary', maxLength: 120 }),
  fc.integer(),
  fc.double(),
  fc.json({ depthSize: 'small' }).map((text) => JSON.parse(text) as unknown),
);

const payload = fc.oneof(
  // Near-valid payloads with one hostile value.
  fc.record(
    {
      name: fc.oneof(nasty, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 110 })),
      categoryId: fc.oneof(nasty, fc.integer({ min: 1 })),
      status: fc.oneof(nasty, fc.constantFrom('available', 'pending', 'sold')),
      extra: nasty,
    },
    { requiredKeys: [] },
  ),
  fc.anything({ maxDepth: 3 }),
  fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'name', 'categoryId', 'id', 'toString'), nasty),
);

it(`POST /pets: ${runs} hostile bodies — never a 5xx, valid Error objects, and only 201s write`, async () => {
  const before = await countPets(api, key);
  let created = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        { weight: 8, arbitrary: payload.map((value) => JSON.stringify(value) ?? 'undefined') },
        // Raw text: duplicate keys, truncated JSON, prototype keys spelled out, deep nesting.
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            '{"name":"a","name":"b","categoryId":1}',
            '{"__proto__":{"admin":true},"name":"x","categoryId":1}',
            '{"name":',
            '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
            'null',
            '"text"',
            '1e999',
            '\uFEFF{}',
          ),
        },
        { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
      ),
      fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/xml', ''),
      async (body, contentType) => {
        const headers: Record<string, string> = contentType ? { 'Content-Type': contentType } : {};
        const response = await api.call('/pets', { method: 'POST', headers, body, key });
        await expectWellFormed(response, [201, 400, 413, 415]);
        if (response.status === 201) created++;
      },
    ),
    { numRuns: runs },
  );
  expect(await countPets(api, key)).toBe(before + created);
});

/**
 * Decision 12: valid JSON whose object names a member twice (RFC 8259, section 4: names "SHOULD be
 * unique"; parsers that differ on the rest are a known attack) or names one `__proto__` (no field of
 * any operation: decision 2) is refused with a 400 naming the member, never read as its last value.
 */
describe('bodies with a repeated member or a __proto__ member', () => {
  it.each([
    ['{"name":"x","categoryId":1,"__proto__":{}}', 'Unknown field in the request body: "__proto__".'],
    ['{"__proto__":{"admin":true},"name":"x","categoryId":1}', 'Unknown field in the request body: "__proto__".'],
    ['{"name":"first","categoryId":1,"name":"second"}', 'The request body names the field "name" more than once.'],
    ['{"name":"x","categoryId":1,"categ\\u006fryId":2}', 'The request body names the field "categoryId" more than once.'],
  ])('POST /pets with %s → 400 invalid_request naming the member, and nothing is written', async (body, message) => {
    const before = await countPets(api, key);
    const response = await api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, key });
    expect(await expectWellFormed(response, [400])).toEqual({ code: 'invalid_request', status: 400, message });
    expect(await countPets(api, key)).toBe(before);
  });
});

it('POST /pets: bodies of 1 MB and 16 KiB + 1 byte are refused with 413 and write nothing', async () => {
  const before = await countPets(api, key);
  for (const size of [16 * 1024 + 1, 1024 * 1024]) {
    const body = JSON.stringify({ name: 'x'.repeat(size), categoryId: 1 });
    const response = await api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, key });
    await expectWellFormed(response, [413]);
  }
  expect(await countPets(api, key)).toBe(before);
});

it(`GET /pets: ${runs} hostile query strings — 200 or a 400 Error object, never a 5xx`, async () => {
  const value = fc.oneof(
    nasty.map(asText),
    fc.string({ maxLength: 30 }),
    fc.constantFrom('1', '100', '101', '0', '-1', '1e2', '0x10', '١', 'available', 'sold', ''),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.oneof(fc.constantFrom('limit', 'status', 'cursor'), fc.string({ maxLength: 8 })), value, { maxKeys: 4 }),
      async (parameters) => {
        const response = await api.call(`/pets?${new URLSearchParams(parameters)}`, { key });
        await expectWellFormed(response, [200, 400]);
      },
    ),
    { numRuns: runs },
  );
});

it(`GET /pets/{petId}: ${runs} hostile ids — 200, 404 or a 400 Error object, never a 5xx`, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(nasty.map(asText), fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), fc.bigInt().map(String)),
      async (petId) => {
        const response = await atInstant(api.clock, beforeGetPetSunset, () => api.call(`/pets/${encodeURIComponent(petId)}`, { key }));
        // An id with a "/" in it is another (unknown) route: 404 from the gateway.
        await expectWellFormed(response, [200, 400, 404]);
      },
    ),
    { numRuns: runs },
  );
});

it(`Authorization: ${runs} hostile header values — always a 401 Error object with WWW-Authenticate`, async () => {
  const headerSafe = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
    minLength: 1,
    maxLength: 120,
  });
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        headerSafe,
        headerSafe.map((token) => `Bearer ${token}`),
        headerSafe.map((token) => `bearer psk_${token}`),
        fc.constant(`Bearer ${key.slice(0, -1)}x`),
      ),
      async (authorization) => {
        fc.pre(authorization.trim() !== '' && !authorization.includes(key));
        const response = await api.call('/pets', { key: null, headers: { Authorization: authorization } });
        await expectWellFormed(response, [401]);
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
      },
    ),
    { numRuns: runs },
  );
});

describe('names a person cannot see, or that display as something else', () => {
  const postName = (name: string) =>
    api.call('/pets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 1 }),
      key,
    });

  const hidden = ['\u200b\u200b\u200b', '\ufeff', '\u200d', 'abc\u202Eexe.txt', '\uffff', '\u2066Rex\u2069', 'Rex\ufdd0', '\u3164'];

  it.each(hidden.map((name) => [JSON.stringify(name), name]))(
    'POST /pets with name %s → 400 naming name, and nothing is written',
    async (_, name) => {
      const before = await countPets(api, key);
      const response = await postName(name);
      const body = (await expectWellFormed(response, [400])) as { message: string };
      expect(body.message).toMatch(/^name /);
      expect(await countPets(api, key)).toBe(before);
    },
  );

  it.each(['Rex 🐕', 'Émile', '李'])('POST /pets with name %s → 201, the name kept as sent', async (name) => {
    const response = await postName(name);
    expect(await expectWellFormed(response, [201])).toMatchObject({ name });
  });

  it(`${Math.min(runs, 300)} names of whitespace, format and zero-width characters only, or with a bidi control or noncharacter → 400 naming name`, async () => {
    const before = await countPets(api, key);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(invisible, { minLength: 1, maxLength: 12 }).map((characters) => characters.join('')),
          fc
            .tuple(fc.string({ unit: 'grapheme', maxLength: 10 }), forbidden, fc.string({ unit: 'grapheme', maxLength: 10 }))
            .map((parts) => parts.join('')),
        ),
        async (name) => {
          const response = await postName(name);
          const body = (await expectWellFormed(response, [400])) as { message: string };
          expect(body.message).toMatch(/^name /);
        },
      ),
      { numRuns: Math.min(runs, 300) },
    );
    expect(await countPets(api, key)).toBe(before);
  });
});
