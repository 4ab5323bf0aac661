/**
 * The order of createApiHandler's middleware, seen from outside through the
 * operations' own handler factories (createHandler): which answer
 * wins when a request is wrong in several ways at once, and which headers an
 * error still carries. No DynamoDB: the requests here are decided before the
 * counters answer — refused for a missing caller, or stopped by a counter store
 * that refuses connections or never answers (a socket on the loopback address).
 * The order once the counters have answered is tested over HTTP
 * (test/e2e/hostile-input.test.ts, test/e2e/rate-limits.test.ts).
 */
import * as net from 'node:net';
import { gatewayResponse } from '../../definitions/gateway-responses';
import { functionTimeoutSeconds, routeFor } from '../../definitions/routes';
import { createHandler as createCreatePetHandler } from '../../functions/create-pet/handler';
import { createHandler as createGetPetHandler } from '../../functions/get-pet/handler';
import { createDocumentClient, type Dependencies } from '../../functions/runtime/dependencies';
import { EXECUTE_API_DOMAIN, lambdaContext, type RestRequest, restProxyEvent } from '../support/api-gateway-events';

const beforeSunset = Date.parse('2029-06-01T12:00:00Z');
const afterSunset = Date.parse('2031-01-01T00:00:00Z');
const proCaller = { keyId: 'key-1', customerId: 'key-1', plan: 'pro', perMinute: '300', perDay: '10000' };
const createPet = (request: Pick<RestRequest, 'body' | 'headers' | 'authorizer'>) =>
  restProxyEvent({ method: 'POST', resource: '/pets', path: '/pets', ...request });
const getPet7 = (request: Pick<RestRequest, 'authorizer'> = {}) =>
  restProxyEvent({ method: 'GET', resource: '/pets/{petId}', path: '/pets/7', pathParameters: { petId: '7' }, ...request });

/** A loopback port nobody listens on: connections are refused at once. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function dependenciesOn(port: number, now: number): Dependencies {
  const db = createDocumentClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return { db, tableNames: { pets: 'pets', apiKeys: 'api-keys', rateLimits: 'rate-limits', idempotency: 'idempotency' }, clock: () => now };
}

let refusingPort: number;
beforeAll(async () => {
  refusingPort = await closedPort();
});

/** The operations' own handler factories: the middleware stack exactly as deployed. */
const factories = { createPet: createCreatePetHandler, getPet: createGetPetHandler };

function handlerFor(operationId: keyof typeof factories, now: number, port = refusingPort) {
  return factories[operationId](dependenciesOn(port, now));
}

const oversizeBody = JSON.stringify({ name: 'x'.repeat(20_000), categoryId: 1 });

it('refuses a request without a caller before looking at its body', async () => {
  const handler = handlerFor('createPet', beforeSunset);
  const response = await handler(createPet({ body: oversizeBody, headers: { 'Content-Type': 'text/plain' } }), lambdaContext());
  expect(response.statusCode).toBe(401);
  expect(JSON.parse(response.body)).toMatchObject({ code: 'unauthorized' });
  expect(response.headers).toMatchObject({ 'WWW-Authenticate': 'Bearer', 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
});

it('counts a request before looking at its body: a counter store that is down answers 503, not 413', async () => {
  const handler = handlerFor('createPet', beforeSunset);
  const response = await handler(createPet({ body: oversizeBody, authorizer: proCaller }), lambdaContext());
  expect(response.statusCode).toBe(503);
  expect(JSON.parse(response.body)).toMatchObject({ code: 'service_unavailable' });
  expect(response.headers).toMatchObject({ 'Retry-After': '2' });
});

describe('a deprecated operation (getPet)', () => {
  const deprecation = routeFor('getPet').deprecation!;

  it('carries Deprecation, Sunset and a successor Link on its errors too', async () => {
    const handler = handlerFor('getPet', beforeSunset);
    const response = await handler(getPet7(), lambdaContext());
    expect(response.statusCode).toBe(401);
    expect(response.headers).toMatchObject({
      Deprecation: `@${Date.parse(deprecation.deprecatedAt) / 1000}`,
      Sunset: new Date(deprecation.sunsetAt).toUTCString(),
      Link: `<https://${EXECUTE_API_DOMAIN}/v1${deprecation.successorPath}>; rel="successor-version"`,
    });
  });

  it('after its sunset, still checks the caller and counts the request before answering 410', async () => {
    const withoutCaller = await handlerFor('getPet', afterSunset)(getPet7(), lambdaContext());
    expect(withoutCaller.statusCode).toBe(401);
    const handler = handlerFor('getPet', afterSunset);
    const counted = await handler(getPet7({ authorizer: proCaller }), lambdaContext());
    expect(counted.statusCode).toBe(503);
    expect(counted.headers).toHaveProperty('Deprecation');
  });
});

describe('a counter store that hangs', () => {
  let silent: net.Server;
  let silentPort: number;
  const sockets = new Set<net.Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers.
    silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('gives a 503 with the shared headers before the Lambda timeout, never a hang', async () => {
    const handler = handlerFor('getPet', beforeSunset, silentPort);
    const startedAt = Date.now();
    const response = await handler(getPet7({ authorizer: proCaller }), lambdaContext());
    // Each DynamoDB call gives up after two attempts of 1 s (DYNAMODB_CALL_BUDGET), so the answer
    // comes before the function's timeout (and the 500 ms early-answer margin before it).
    expect(Date.now() - startedAt).toBeLessThan(functionTimeoutSeconds * 1000 - 500);
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({ 'Retry-After': '2', 'Cache-Control': 'no-store', Deprecation: expect.any(String) });
  });
});

it('refuses two Authorization fields with the gateway’s 401, in either order, before the counters are asked', async () => {
  const handler = handlerFor('getPet', beforeSunset);
  const unauthorized = gatewayResponse('UNAUTHORIZED');
  for (const fields of [
    ['Bearer psk_valid', 'Bearer junk'],
    ['Bearer junk', 'Bearer psk_valid'],
  ]) {
    // As API Gateway would hand it on after an Allow it cached for one of the values.
    const event = restProxyEvent({
      method: 'GET',
      resource: '/pets/{petId}',
      path: '/pets/7',
      pathParameters: { petId: '7' },
      authorizer: proCaller,
      repeatedHeaders: { Authorization: fields },
    });
    const response = await handler(event, lambdaContext());
    // Not the 503 of the counter store that refuses connections: decided before it.
    expect(response.statusCode).toBe(401);
    expect(response.headers).toMatchObject({ 'WWW-Authenticate': 'Bearer' });
    expect(JSON.parse(response.body)).toEqual(JSON.parse(unauthorized.body));
  }
});
