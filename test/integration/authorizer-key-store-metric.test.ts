import { businessMetrics } from '../../definitions/metrics';
import { createHandler } from '../../functions/authorizer/handler';
import { generateApiKey } from '../../functions/customers';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { issueTestKey } from '../support/api';
import { requestAuthorizerEvent } from '../support/api-gateway-events';
import { createTestTables, testDependencies } from '../support/dynamo';
import { captureMetrics } from '../support/metrics';

/**
 * The authorizer alarm watches KeyStoreFailures (lib/constructs/operational-alarms.ts),
 * not the authorizer's Lambda Errors: refusing a key means throwing "Unauthorized",
 * which Lambda counts as an error, so Errors rises with every scanner. Here, on
 * DynamoDB Local, refused keys emit nothing and a failing key store emits one
 * KeyStoreFailures per request (CloudWatch embedded metric format on stdout).
 */
let dependencies: Dependencies;
beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
});
afterAll(() => dependencies.db.destroy());

const event = (authorization: string | undefined) =>
  requestAuthorizerEvent({
    method: 'GET',
    resource: '/pets',
    path: '/pets',
    ...(authorization === undefined ? {} : { headers: { Authorization: authorization } }),
  });

/** Runs the authorizer with metrics on, returning how it ended and the KeyStoreFailures it emitted. */
async function authorize(deps: Dependencies, authorization: string | undefined) {
  const { result: outcome, lines } = await captureMetrics(() =>
    createHandler(deps)(event(authorization)).then(
      () => 'allowed',
      (error: Error) => error.message,
    ),
  );
  const failures = lines.reduce((sum, line) => sum + Number(line[businessMetrics.names.keyStoreFailures] ?? 0), 0);
  return { outcome, failures };
}

it('refused keys (missing, malformed, unknown) do not move the authorizer alarm metric', async () => {
  const unknown = generateApiKey({ plan: 'free', owner: 'nobody', now: Date.now() }).secret;
  for (const authorization of [undefined, 'Bearer', 'Bearer not-a-key', `Bearer ${unknown}`, unknown]) {
    expect(await authorize(dependencies, authorization)).toEqual({ outcome: 'Unauthorized', failures: 0 });
  }
});

it('a valid key is allowed and counts nothing', async () => {
  const secret = await issueTestKey(dependencies, 'pro');
  expect(await authorize(dependencies, `Bearer ${secret}`)).toEqual({ outcome: 'allowed', failures: 0 });
});

it('a key store that fails counts one KeyStoreFailures and is not reported as a refused key', async () => {
  const secret = await issueTestKey(dependencies, 'pro');
  const brokenStore = { ...dependencies, tableNames: { ...dependencies.tableNames, apiKeys: 'no-such-table' } };
  const { outcome, failures } = await authorize(brokenStore, `Bearer ${secret}`);
  expect(outcome).not.toBe('Unauthorized');
  expect(failures).toBe(1);
});
