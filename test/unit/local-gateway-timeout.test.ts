import type { AddressInfo } from 'node:net';
import { gatewayResponse } from '../../definitions/gateway-responses';
import { routes } from '../../definitions/routes';
import { type AuthorizerHandler, createLocalGateway, type LocalGatewayOptions, type ProxyHandler } from '../../local/gateway';

/**
 * API Gateway stops waiting for a Lambda proxy integration after 29 s (REST API
 * quotas: integration timeout) and answers INTEGRATION_TIMEOUT. The local
 * gateway does the same, here with a short timeout and a function that never answers.
 */
it('answers INTEGRATION_TIMEOUT (503 with Retry-After) when the function does not answer in time', async () => {
  const never = () => new Promise<never>(() => undefined);
  const server = createLocalGateway({
    routes: routes.map((route) => ({ route, handler: never })),
    authorizer: async () => ({
      principalId: 'key_1',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local/v1/*' }],
      },
    }),
    clock: () => Date.now(),
    integrationTimeoutMs: 50,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { Authorization: 'Bearer anything' } });
    const expected = gatewayResponse('INTEGRATION_TIMEOUT');
    expect(response.status).toBe(expected.statusCode);
    const body = await response.text();
    expect(body).toBe(expected.body);
    // The function may still be running, and write: a timed-out POST may have created its pet.
    expect(JSON.parse(body).message).toMatch(/unknown whether the request took effect/);
    expect(response.headers.get('retry-after')).toBe(expected.headers['Retry-After']);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const allowAll: AuthorizerHandler = async () => ({
  principalId: 'key_1',
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local/v1/*' }],
  },
});

async function answerOf(options: Partial<LocalGatewayOptions> & { handler?: ProxyHandler }) {
  const never = () => new Promise<never>(() => undefined);
  const server = createLocalGateway({
    routes: routes.map((route) => ({ route, handler: options.handler ?? never })),
    authorizer: allowAll,
    clock: () => Date.now(),
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { Authorization: 'Bearer anything' } });
    return { status: response.status, body: await response.text(), retryAfter: response.headers.get('retry-after') };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * API Gateway waits 10 s for a Lambda authorizer's answer ("Timeout for Lambda
 * authorizer response", https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html),
 * then cannot authorize: the local gateway answers AUTHORIZER_CONFIGURATION_ERROR.
 */
it('answers AUTHORIZER_CONFIGURATION_ERROR (503 with Retry-After) when the authorizer does not answer in time', async () => {
  const answer = await answerOf({ authorizer: () => new Promise<never>(() => undefined), authorizerTimeoutMs: 50 });
  const expected = gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR');
  expect(answer).toEqual({ status: expected.statusCode, body: expected.body, retryAfter: expected.headers['Retry-After'] });
});

it('hands the authorizer a Lambda context whose remaining time is its timeout', async () => {
  let remaining = 0;
  await answerOf({
    authorizer: async (event, context) => {
      remaining = context.getRemainingTimeInMillis();
      return allowAll(event, context);
    },
    authorizerTimeoutMs: 5_000,
    handler: async () => ({ statusCode: 200, body: '{}' }),
  });
  expect(remaining).toBeGreaterThan(4_000);
  expect(remaining).toBeLessThanOrEqual(5_000);
});

/**
 * Lambda stops a function at its timeout; API Gateway answers that function
 * error with a 5xx ("Handling Lambda errors with an API Gateway API",
 * https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html): INTEGRATION_FAILURE (definitions/gateway-responses.ts).
 */
it('answers INTEGRATION_FAILURE when the function runs past its Lambda timeout, before the integration timeout', async () => {
  const answer = await answerOf({ functionTimeoutMs: 50, integrationTimeoutMs: 5_000 });
  const expected = gatewayResponse('INTEGRATION_FAILURE');
  expect(answer).toMatchObject({ status: expected.statusCode, body: expected.body });
});
