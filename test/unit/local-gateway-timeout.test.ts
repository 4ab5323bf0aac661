import type { AddressInfo } from 'node:net';
import { gatewayResponse } from '../../definitions/gateway-responses';
import { routes } from '../../definitions/routes';
import { createLocalGateway } from '../../local/gateway';

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
    expect(await response.text()).toBe(expected.body);
    expect(response.headers.get('retry-after')).toBe(expected.headers['Retry-After']);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
