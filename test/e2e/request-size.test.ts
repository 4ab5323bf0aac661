/**
 * Large bodies over real HTTP, on the local gateway imitating what the stage
 * does (docs/api-gateway-behaviour.md, "Request bodies"): AWS WAF refuses a
 * body over 16 KiB with our Error object before API Gateway, the authorizer or
 * a function runs. Without the firewall, a body between Lambda's 6 MB invoke
 * limit and API Gateway's 10 MB payload limit is a 500 from API Gateway (the
 * Lambda API rejects the invocation): the failure the firewall exists to stop.
 * The functions and the authorizer here count their invocations.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayResponse } from '../../definitions/gateway-responses';
import { maxRequestBodyBytes, oversizeBodyAnswer } from '../../definitions/request-size-limits';
import { routes } from '../../definitions/routes';
import { type AuthorizerHandler, createLocalGateway, type ProxyHandler } from '../../local/gateway';
import { startTestApi, type TestApi } from '../support/api';

const MB = 1024 * 1024;
let invocations: { authorizer: number; functions: number };

const authorizer: AuthorizerHandler = async () => {
  invocations.authorizer++;
  return {
    principalId: 'key_1',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local/v1/*' }],
    },
  };
};
const handler: ProxyHandler = async () => {
  invocations.functions++;
  return { statusCode: 201, headers: { 'Content-Type': 'application/json' }, body: '{}' };
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on a gateway with or without the firewall; a fresh connection each time. */
async function send(firewall: boolean, method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  invocations = { authorizer: 0, functions: 0 };
  const server = createLocalGateway({ routes: routes.map((route) => ({ route, handler })), authorizer, clock: () => Date.now(), firewall });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const outgoing = request(
        { host: '127.0.0.1', port, method, path, headers: { ...headers, 'Content-Length': String(body.length) } },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () =>
            resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8') }),
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const json = { Authorization: 'Bearer psk_anything', 'Content-Type': 'application/json' };
const bodyOf = (bytes: number) => Buffer.alloc(bytes, 0x20);

function expectRefusedAtTheEdge(answer: Answer): void {
  expect(answer.status).toBe(413);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(JSON.parse(answer.body)).toEqual({
    code: 'payload_too_large',
    message: `The request body is larger than 16 KiB (${16 * 1024} bytes).`,
    status: 413,
  });
  expect(Object.keys(answer.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
  expect(invocations).toEqual({ authorizer: 0, functions: 0 });
}

it('the limit is the largest body an operation accepts: 16 KiB (decision 12)', () => {
  expect(maxRequestBodyBytes).toBe(16 * 1024);
});

it.each([
  ['16 KiB + 1 byte', 16 * 1024 + 1],
  ['1 MB', MB],
  ["7 MB: past Lambda's 6 MB invoke limit, within API Gateway's 10 MB", 7 * MB],
  ["11 MB: past API Gateway's 10 MB", 11 * MB],
])('POST /v1/pets with %s: 413 with the Error object, before the authorizer or any function runs', async (_, bytes) => {
  expectRefusedAtTheEdge(await send(true, 'POST', '/v1/pets', json, bodyOf(bytes)));
});

it('a GET with a body over the limit, an unknown route and a request without a key are refused alike: the firewall comes first', async () => {
  expectRefusedAtTheEdge(await send(true, 'GET', '/v1/pets', json, bodyOf(20 * 1024)));
  expectRefusedAtTheEdge(await send(true, 'POST', '/v1/no-such-route', json, bodyOf(7 * MB)));
  expectRefusedAtTheEdge(await send(true, 'POST', '/v1/pets', { 'Content-Type': 'application/json' }, bodyOf(7 * MB)));
});

it('a body of exactly 16 KiB passes the firewall and reaches the function', async () => {
  const answer = await send(true, 'POST', '/v1/pets', json, bodyOf(16 * 1024));
  expect(answer.status).toBe(201);
  expect(invocations).toEqual({ authorizer: 1, functions: 1 });
});

describe('without the firewall (what API Gateway and Lambda alone do)', () => {
  it('a 7 MB body is a 5xx: Lambda refuses the invocation, API Gateway answers INTEGRATION_FAILURE, no function runs', async () => {
    const answer = await send(false, 'POST', '/v1/pets', json, bodyOf(7 * MB));
    const expected = gatewayResponse('INTEGRATION_FAILURE');
    expect(answer.status).toBe(expected.statusCode);
    expect(answer.body).toBe(expected.body);
    expect(invocations).toEqual({ authorizer: 1, functions: 0 });
  });

  it("an 11 MB body gets API Gateway's own 413 (REQUEST_TOO_LARGE)", async () => {
    const answer = await send(false, 'POST', '/v1/pets', json, bodyOf(11 * MB));
    expect(answer.status).toBe(413);
    expect(answer.body).toBe(gatewayResponse('REQUEST_TOO_LARGE').body);
    expect(invocations).toEqual({ authorizer: 0, functions: 0 });
  });
});

/**
 * What a client sees from `npm start` (the whole local API, as startLocalApi
 * runs it, on DynamoDB Local): Node's own fetch (undici) sends its whole body
 * before it reads an answer, so a gateway that answered mid-upload and closed
 * gave it EPIPE and no status at all. The gateway reads a body up to API
 * Gateway's 10 MB to its end, then answers 413 and closes. On loopback a body
 * can sit whole in the sockets' buffers before the gateway reads a byte (the
 * race then seldom shows); over a real network it arrives over time, which
 * the second form imitates.
 */
function arrivingOverTime(body: Buffer): ReadableStream<Uint8Array> {
  const CHUNK = 64 * 1024;
  let offset = 0;
  return new ReadableStream({
    async pull(controller) {
      // One turn of the event loop between chunks: the gateway reads and answers meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
      if (offset >= body.length) return controller.close();
      controller.enqueue(body.subarray(offset, offset + CHUNK));
      offset += CHUNK;
    },
  });
}

describe('Node fetch against the whole local API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  const functionInvocations = () => routes.reduce((sum, route) => sum + api.functions[route.operationId]!.invocations, 0);
  const bodyForms = {
    'in one piece': (body: Buffer) => ({ body }),
    'arriving over time': (body: Buffer) => ({
      body: arrivingOverTime(body),
      duplex: 'half',
      headers: { 'Content-Length': String(body.length) },
    }),
  };

  it.each([
    [5, 'in one piece'],
    [7, 'in one piece'],
    [5, 'arriving over time'],
    [7, 'arriving over time'],
  ] as const)(
    'POST /v1/pets with %i MB %s, five times: a 413 with the Error object every time, and no function runs',
    async (megabytes, form) => {
      const key = await api.issueKey('pro');
      const before = { functions: functionInvocations(), authorizer: api.functions.authorizer!.invocations };
      const outcomes: string[] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        const { headers, ...sent } = bodyForms[form](bodyOf(megabytes * MB)) as {
          headers?: Record<string, string>;
          body: RequestInit['body'];
        };
        try {
          const response = await fetch(`${api.url}/pets`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers },
            ...sent,
          } as RequestInit);
          outcomes.push(`${response.status} ${response.headers.get('connection')} ${await response.text()}`);
        } catch (error) {
          // What the gateway gave before: no status, the connection reset under the upload.
          outcomes.push(`no answer: ${String((error as Error).cause ?? error)}`);
        }
      }
      expect(outcomes).toEqual(Array(5).fill(`413 close ${oversizeBodyAnswer.body}`));
      expect({ functions: functionInvocations(), authorizer: api.functions.authorizer!.invocations }).toEqual(before);
    },
  );
});
