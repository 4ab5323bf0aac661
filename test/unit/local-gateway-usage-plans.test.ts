import type { AddressInfo } from 'node:net';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { gatewayResponse } from '../../definitions/gateway-responses';
import { routes } from '../../definitions/routes';
import type { UsagePlanSettings } from '../../definitions/usage-plan-limits';
import { createLocalGateway } from '../../local/gateway';

/**
 * The local gateway applies usage plans as API Gateway does: per API key (the
 * authorizer's usageIdentifierKey), a token bucket of the throttle's rate and
 * burst and a daily quota, after the authorizer; a Deny never reaches them
 * (docs/api-gateway-behaviour.md). The clock is the test's.
 */
const policy = (effect: 'Allow' | 'Deny', apiKey: string): APIGatewayAuthorizerResult => ({
  principalId: apiKey,
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: 'arn:aws:execute-api:local:000000000000:local/v1/*' }],
  },
  usageIdentifierKey: apiKey,
});

async function withGateway(
  plan: UsagePlanSettings,
  run: (call: (token: string) => Promise<number>, clock: { now: number }) => Promise<void>,
) {
  const clock = { now: Date.parse('2026-03-01T23:59:58Z') };
  let invocations = 0;
  const server = createLocalGateway({
    routes: routes.map((route) => ({
      route,
      handler: async () => {
        invocations++;
        return { statusCode: 200, body: '[]' };
      },
    })),
    // The token names the metering key; "denied-…" tokens are denied.
    authorizer: async (event) => {
      const token = String(event.headers?.Authorization ?? '').replace('Bearer ', '');
      return policy(token.startsWith('denied') ? 'Deny' : 'Allow', token);
    },
    clock: () => clock.now,
    authorizerCacheTtlSeconds: 0,
    usagePlanOf: (apiKey) => (apiKey.startsWith('metered') || apiKey.startsWith('denied') ? plan : undefined),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const call = async (token: string) => {
      const response = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { Authorization: `Bearer ${token}` } });
      const body = await response.text();
      if (response.status === 200) return 200;
      const types = ['THROTTLED', 'QUOTA_EXCEEDED', 'ACCESS_DENIED'] as const;
      const type = types.find((candidate) => gatewayResponse(candidate).body === body);
      return type ? { THROTTLED: -1, QUOTA_EXCEEDED: -2, ACCESS_DENIED: -3 }[type] : response.status;
    };
    await run(call, clock);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return invocations;
}

const THROTTLED = -1;
const QUOTA_EXCEEDED = -2;
const ACCESS_DENIED = -3;

it('throttles one API key by its token bucket (burst at once, then the rate), and never another key', async () => {
  await withGateway({ throttle: { rateLimit: 2, burstLimit: 3 } }, async (call, clock) => {
    const answers = [];
    for (let index = 0; index < 4; index++) answers.push(await call('metered-a'));
    expect(answers).toEqual([200, 200, 200, THROTTLED]);
    expect(await call('metered-b')).toBe(200);
    expect(await call('unmetered')).toBe(200);
    clock.now += 500; // half a second at 2 a second: one token
    expect([await call('metered-a'), await call('metered-a')]).toEqual([200, THROTTLED]);
  });
});

it('refuses past the daily quota of one API key until the next UTC day', async () => {
  await withGateway({ quota: { limit: 2 } }, async (call, clock) => {
    expect([await call('metered-a'), await call('metered-a'), await call('metered-a')]).toEqual([200, 200, QUOTA_EXCEEDED]);
    expect(await call('metered-b')).toBe(200);
    clock.now += 2000; // past midnight UTC
    expect(await call('metered-a')).toBe(200);
  });
});

it('a plan with neither limits nothing; a Deny is answered before any usage plan and runs nothing', async () => {
  const invocations = await withGateway({}, async (call) => {
    for (let index = 0; index < 20; index++) expect(await call('metered-a')).toBe(200);
    for (let index = 0; index < 5; index++) expect(await call('denied-a')).toBe(ACCESS_DENIED);
  });
  expect(invocations).toBe(20);
});

it('applies the plan as it is now: a raised burst adds its difference at once, a lowered one keeps what was spent', async () => {
  const plan: UsagePlanSettings = { throttle: { rateLimit: 1, burstLimit: 3 } };
  await withGateway(plan, async (call) => {
    expect([await call('metered-a'), await call('metered-a')]).toEqual([200, 200]);
    // Raised (as the key tool does before the customer's record changes): 1 token left + 7.
    plan.throttle = { rateLimit: 1, burstLimit: 10 };
    const raised = [];
    for (let index = 0; index < 9; index++) raised.push(await call('metered-a'));
    expect(raised).toEqual([...Array(8).fill(200), THROTTLED]);
    // Lowered: what was spent stays spent, so nothing is left of a bucket of 3.
    plan.throttle = { rateLimit: 1, burstLimit: 3 };
    expect(await call('metered-a')).toBe(THROTTLED);
  });
});
