import { request as httpRequest } from 'node:http';
import { countPets, startTestApi, type TestApi } from '../support/api';

/**
 * Decisions 17 to 22, over HTTP on npm start's API: what a client sees for
 * the edges of a request that the contract left open — a repeated
 * Content-Type, a byte order mark, numbers written with a fraction or an
 * exponent, what "the same body" is to an Idempotency-Key, a repeated
 * Idempotency-Key, and an Idempotency-Key on a GET.
 */
let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startTestApi();
  key = await api.issueKey('enterprise', { perMinute: 100_000, perDay: 1_000_000 });
});
afterAll(() => api.close());

interface Answer {
  status: number;
  body: { id?: number; categoryId?: number; code?: string; message?: string; status?: number };
}

/**
 * A request whose repeated headers go out as one field line per value, as
 * fetch cannot send them (its Headers join repeated values with ", ").
 */
function send(method: string, path: string, headers: Record<string, string | string[]>, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${api.url}${path}`, { method }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    request.setHeader('Authorization', `Bearer ${key}`);
    for (const [name, value] of Object.entries(headers)) request.setHeader(name, value);
    request.on('error', reject);
    request.end(body);
  });
}

const json = { 'Content-Type': 'application/json' };
const post = (body: string | Buffer, headers: Record<string, string | string[]> = json) => send('POST', '/pets', headers, body);

describe('decision 17: Content-Type sent twice', () => {
  it.each([[['application/json', 'application/json']], [['text/plain', 'application/json']], [['application/json', 'text/plain']]])(
    '%j as two field lines → 415 unsupported_media_type, and nothing is written',
    async (values) => {
      const before = await countPets(api, key);
      const answer = await post('{"name":"Twice","categoryId":1}', { 'Content-Type': values });
      expect(answer).toEqual({
        status: 415,
        body: { code: 'unsupported_media_type', status: 415, message: 'Content-Type must be sent once; it was sent 2 times.' },
      });
      expect(await countPets(api, key)).toBe(before);
      // The same request with the field sent once is created: only the repetition was refused.
      expect((await post('{"name":"Twice","categoryId":1}', { 'Content-Type': 'application/json' })).status).toBe(201);
    },
  );
});

describe('decision 18: a byte order mark before the JSON', () => {
  it('is a 400 "not valid JSON" (RFC 8259, section 8.1), and nothing is written; the same text without it is created', async () => {
    const text = '{"name":"Marked","categoryId":1}';
    const before = await countPets(api, key);
    const answer = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]));
    expect(answer).toEqual({ status: 400, body: { code: 'invalid_request', status: 400, message: 'The request body is not valid JSON.' } });
    expect(await countPets(api, key)).toBe(before);
    expect((await post(text)).status).toBe(201);
  });
});

describe('decision 19: categoryId written with a fraction or an exponent', () => {
  it.each([
    ['1.0', 1],
    ['1e0', 1],
    ['1E2', 100],
    ['2.50e1', 25],
    ['9007199254740991.0', 9007199254740991],
    // Below a double's precision near 2^53 the fraction is rounded away (RFC 7493, section 2.2).
    ['9007199254740990.5', 9007199254740990],
  ])('%s is the integer %d: 201', async (written, value) => {
    const answer = await post(`{"name":"Spelt","categoryId":${written}}`);
    expect(answer.status).toBe(201);
    expect(answer.body.categoryId).toBe(value);
  });

  it.each(['1.5', '1e-1', '9007199254740993', '1E400'])('%s is no integer from 1 to 2^53−1: 400 naming categoryId', async (written) => {
    const answer = await post(`{"name":"Spelt","categoryId":${written}}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request', status: 400, message: expect.stringContaining('categoryId') });
  });
});

describe('decision 20: "the same body" for an Idempotency-Key', () => {
  it('is the same fields with the same values: reordered, re-spaced, escaped or 3.0 for 3 replays; a default written out is another body (422)', async () => {
    const idempotencyKey = { ...json, 'Idempotency-Key': '"same-body-1"' };
    const before = await countPets(api, key);
    const first = await post('{"name":"Same","categoryId":3}', idempotencyKey);
    expect(first.status).toBe(201);
    for (const text of ['{ "categoryId" : 3,\n  "name" : "Same" }', '{"n\\u0061me":"S\\u0061me","categoryId":3.0}']) {
      expect(await post(text, idempotencyKey)).toEqual(first);
    }
    const withDefault = await post('{"name":"Same","categoryId":3,"status":"available"}', idempotencyKey);
    expect(withDefault.status).toBe(422);
    expect(withDefault.body).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect(await countPets(api, key)).toBe(before + 1);
  });
});

describe('decision 21: Idempotency-Key sent twice', () => {
  it.each([[['"twice-1"', '"twice-2"']], [['"twice-3"', '"twice-3"']]])(
    '%j as two field lines → 400 naming the field, nothing written or remembered',
    async (values) => {
      const before = await countPets(api, key);
      const answer = await post('{"name":"Twice","categoryId":1}', { ...json, 'Idempotency-Key': values });
      expect(answer).toEqual({
        status: 400,
        body: { code: 'invalid_request', status: 400, message: 'Idempotency-Key must be sent once; it was sent 2 times.' },
      });
      expect(await countPets(api, key)).toBe(before);
      // Nothing was remembered under either value: a create with one of them, with another body, is a new pet.
      const afterwards = await post('{"name":"Other","categoryId":2}', { ...json, 'Idempotency-Key': values[1] as string });
      expect(afterwards.status).toBe(201);
      expect(await countPets(api, key)).toBe(before + 1);
    },
  );
});

describe('decision 22: Idempotency-Key on a GET', () => {
  it('is ignored, whatever its value or count: each GET answers from the data as it is then', async () => {
    const created = await post('{"name":"Read","categoryId":1}');
    const idempotencyKey = { 'Idempotency-Key': '"get-1"' };
    const read = await send('GET', `/pets/${created.body.id}`, idempotencyKey);
    expect(read).toEqual({ status: 200, body: created.body });
    // The same key on another GET is not a replay of the first.
    expect((await send('GET', '/pets/900719925474099', idempotencyKey)).status).toBe(404);
    for (const ignored of [['"a"', '"b"'], 'not a structured-field value']) {
      expect((await send('GET', '/pets?limit=1', { 'Idempotency-Key': ignored })).status).toBe(200);
    }
  });
});
