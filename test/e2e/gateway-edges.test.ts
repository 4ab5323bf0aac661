import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { errorCodes } from '../../definitions/error-codes';
import { startTestApi, type TestApi } from '../support/api';

/**
 * What the local gateway answers at the edges API Gateway decides
 * (docs/api-gateway-behaviour.md): always an Error object, never Node's empty
 * answers, never a hanging connection, and never a URL built from the
 * client's Host or X-Forwarded-* headers.
 */
let api: TestApi;
let key: string;
let port: number;
beforeAll(async () => {
  api = await startTestApi();
  key = await api.issueKey('enterprise', { perMinute: 100_000, perDay: 1_000_000 });
  port = Number(new URL(api.url).port);
});
afterAll(() => api.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with exactly these headers (fetch would not send a forged Host). */
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error('the gateway did not answer: the connection hangs')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Bytes straight onto a socket, for what no HTTP client sends; resolves with everything until the server closes. */
function sendRaw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('the gateway neither answered nor closed the connection')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
    socket.write(text);
  });
}

function expectErrorObject(status: number, body: string, code: keyof typeof errorCodes): void {
  expect(status).toBe(errorCodes[code].status);
  expect(JSON.parse(body)).toEqual({ code, message: expect.any(String), status });
}

it('builds Link from the address the gateway serves, not from a forged Host or X-Forwarded-Proto', async () => {
  for (const name of ['Link one', 'Link two'])
    await api.call('/pets', {
      method: 'POST',
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 1 }),
    });
  const forged = await send('GET', '/v1/pets?limit=1', {
    Authorization: `Bearer ${key}`,
    Host: 'evil.example',
    'X-Forwarded-Proto': 'javascript',
    'X-Forwarded-Host': 'evil.example',
  });
  expect(forged.status).toBe(200);
  const link = String(forged.headers.link);
  expect(link).toMatch(new RegExp(`^<${api.url.replace(/[.?]/g, '\\$&')}/pets\\?limit=1&cursor=[^>]+>; rel="next"$`));
  expect(link).not.toMatch(/evil\.example|javascript:/);

  // A Host that names this server is the URL the client used, as with API Gateway's domainName.
  const direct = await send('GET', '/v1/pets?limit=1', { Authorization: `Bearer ${key}`, Host: `127.0.0.1:${port}` });
  expect(String(direct.headers.link)).toMatch(new RegExp(`^<http://127\\.0\\.0\\.1:${port}/v1/pets\\?limit=1&cursor=`));
});

it('answers headers past 10,240 bytes with a 400 Error object, not an empty 431', async () => {
  const answer = await send('GET', '/v1/pets', { Authorization: `Bearer ${key}`, 'X-Padding': 'a'.repeat(11_000) });
  expectErrorObject(answer.status, answer.body, 'invalid_request');
  expect(answer.headers['content-type']).toBe('application/json');
});

it('answers a method Node does not know (FOO) like any unknown method: a 404 Error object, then closes', async () => {
  const text = await sendRaw(`FOO /v1/pets HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  const [head = '', body = ''] = text.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 404 /);
  expect(head).toMatch(/\r\nContent-Type: application\/json\r\n/i);
  expectErrorObject(404, body, 'not_found');
});

it('answers a body past 10 MB with a 413 Error object and does not leave the connection hanging', async () => {
  const answer = await send(
    'POST',
    '/v1/pets',
    { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    Buffer.alloc(10 * 1024 * 1024 + 1, 0x20),
  );
  expectErrorObject(answer.status, answer.body, 'payload_too_large');
});

it('answers an unknown path, an unknown method, HEAD, OPTIONS and a trailing slash with a 404 Error object, before any authorizer runs', async () => {
  const requests: [string, string][] = [
    ['GET', '/v1/no-such-route'],
    ['DELETE', '/v1/pets'],
    ['HEAD', '/v1/pets'],
    ['OPTIONS', '/v1/pets'],
    ['GET', '/v1/pets/'],
    ['GET', '/pets'],
  ];
  for (const [method, path] of requests) {
    // No Authorization header: a route API Gateway does not know never reaches the authorizer's 401.
    const answer = await send(method, path, {});
    expect(answer.status).toBe(404);
    if (method !== 'HEAD') expectErrorObject(answer.status, answer.body, 'not_found');
  }
});

it('answers a known route without an Authorization header with 401 and WWW-Authenticate, without calling the authorizer', async () => {
  for (const headers of [{}, { Authorization: '' }] as Record<string, string>[]) {
    const answer = await send('GET', '/v1/pets', headers);
    expectErrorObject(answer.status, answer.body, 'unauthorized');
    expect(answer.headers['www-authenticate']).toBe('Bearer');
  }
});

it('hands the function every value of a repeated query parameter (multiValueQueryStringParameters): a repeated limit is a 400 naming it', async () => {
  const answer = await send('GET', '/v1/pets?limit=1&limit=2', { Authorization: `Bearer ${key}` });
  expectErrorObject(answer.status, answer.body, 'invalid_request');
  expect(answer.status).toBe(400);
  expect(JSON.parse(answer.body).message).toMatch(/limit/);
});

it('decodes a body that is not valid UTF-8 with U+FFFD in place of the bad bytes', async () => {
  const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('x","categoryId":1}')]);
  const answer = await send('POST', '/v1/pets', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body);
  expect(answer.status).toBe(201);
  expect((JSON.parse(answer.body) as { name: string }).name).toBe('\uFFFD\uFFFDx');
});
