import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { gatewayResponse } from '../../definitions/gateway-responses';
import { routes } from '../../definitions/routes';
import type { TableName } from '../../definitions/tables';
import { type AuthorizerHandler, createLocalGateway } from '../../local/gateway';
import { type LocalFunction, startLocalFunction } from '../../local/lambda-runtime';

/**
 * A function `npm start` cannot invoke — its process crashes during the
 * invocation (as Lambda stops an environment out of memory), or cannot start
 * (the module throws while loading: Lambda's init failure) — gets the answer
 * API Gateway gives a function Lambda could not run: INTEGRATION_FAILURE, 503
 * with Retry-After (definitions/gateway-responses.ts). The function runs in a
 * real process of local/lambda-runtime.ts, from a bundle whose behaviour marker
 * files in its task root decide; the next invocation starts a fresh process,
 * as Lambda moves it to a new execution environment.
 */
const fixture = `import { existsSync } from 'node:fs';
const marked = (name) => existsSync(process.env.LAMBDA_TASK_ROOT + '/' + name);
if (marked('init-fails')) throw new Error('the module failed to load');
export const handler = async () => {
  if (marked('crashes')) process.kill(process.pid, 'SIGKILL');
  return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{"served":true}' };
};
`;

const allowAll: AuthorizerHandler = async () => ({
  principalId: 'key_1',
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local/v1/*' }],
  },
});

let taskRoot: string;
let fn: LocalFunction;
let server: ReturnType<typeof createLocalGateway>;

beforeAll(async () => {
  taskRoot = mkdtempSync(join(tmpdir(), 'petstore-uninvokable-'));
  const file = join(taskRoot, 'index.mjs');
  writeFileSync(file, fixture);
  const sha256 = createHash('sha256').update(fixture).digest('hex');
  fn = await startLocalFunction({
    bundle: { name: 'getPet', taskRoot, file, sha256 },
    tableNames: Object.fromEntries(['pets', 'apiKeys', 'rateLimits', 'idempotency'].map((name) => [name, name])) as Record<
      TableName,
      string
    >,
    dynamoEndpoint: 'http://127.0.0.1:9',
  });
  server = createLocalGateway({
    routes: routes.map((route) => ({ route, handler: (event, context) => fn.invoke(event, context) as Promise<APIGatewayProxyResult> })),
    authorizer: allowAll,
    clock: () => Date.now(),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  fn?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(taskRoot, { recursive: true, force: true });
});

const mark = (name: string) => writeFileSync(join(taskRoot, name), '');
const unmark = (name: string) => rmSync(join(taskRoot, name), { force: true });

async function getPet() {
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/v1/pets/1`, { headers: { Authorization: 'Bearer anything' } });
  return { status: response.status, body: await response.text(), retryAfter: response.headers.get('retry-after') };
}

const integrationFailure = () => {
  const expected = gatewayResponse('INTEGRATION_FAILURE');
  return { status: expected.statusCode, body: expected.body, retryAfter: expected.headers['Retry-After'] };
};

it('a function whose process dies during the invocation: 503 service_unavailable with Retry-After, and the next request is served by a fresh process', async () => {
  expect((await getPet()).status).toBe(200);
  mark('crashes');
  const crashed = await getPet();
  expect(crashed).toEqual(integrationFailure());
  expect(crashed).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
  expect(JSON.parse(crashed.body)).toMatchObject({ code: 'service_unavailable', status: 503 });
  unmark('crashes');
  expect(await getPet()).toMatchObject({ status: 200, body: '{"served":true}' });
});

it('a function whose process cannot start (its module throws while loading): the same 503 on every request until it loads again', async () => {
  mark('init-fails');
  // The running process dies; every invocation after it tries a new one, which fails to load.
  mark('crashes');
  expect(await getPet()).toEqual(integrationFailure());
  unmark('crashes');
  expect(await getPet()).toEqual(integrationFailure());
  expect(await getPet()).toEqual(integrationFailure());
  unmark('init-fails');
  expect(await getPet()).toMatchObject({ status: 200, body: '{"served":true}' });
});

it('a function whose process was stopped: the same 503', async () => {
  fn.stop();
  expect(await getPet()).toEqual(integrationFailure());
});
