import type { Metrics } from '@aws-lambda-powertools/metrics';
import { deploymentCheckKey } from '../../definitions/deployment-check';
import { businessMetrics } from '../../definitions/metrics';
import {
  metricNames,
  recordAnswer,
  recordAuthorizerOutcome,
  recordPetCreated,
  recordResponse,
  withAuthorizerOutcomes,
} from '../../functions/runtime/metrics';

import { captureMetrics } from '../support/metrics';
import { setEnvironment } from '../support/process-environment';

/** The metric lines the dashboard and the alarms read (CloudWatch EMF on stdout), business and canary ones. */
async function emitted(run: (metrics: Metrics) => unknown): Promise<Record<string, unknown>[]> {
  const { lines } = await captureMetrics(async (metrics) => {
    await run(metrics);
    // Single metrics publish themselves; publishing an empty buffer only logs "No application metrics to publish".
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  });
  return lines;
}

const customer = { plan: 'free' as const, keyId: 'key_0123456789abcdef' };
const check = { plan: 'enterprise' as const, keyId: `${deploymentCheckKey.keyIdPrefix}0123456789ab` };

/** The dimension sets CloudWatch extracts a line's metrics with (EMF `Dimensions`). */
const dimensionSets = (line: Record<string, unknown>) =>
  (line._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics.flatMap((directive) =>
    directive.Dimensions.map((set) => [...set].sort()),
  );

const lambdaEnvironment = { [businessMetrics.functionEnvVar]: 'createPet', AWS_LAMBDA_FUNCTION_VERSION: '42' };
let restoreEnvironment: () => void;
beforeEach(() => {
  restoreEnvironment = setEnvironment({ ...lambdaEnvironment, [businessMetrics.stageEnvVar]: 'production' });
});
afterEach(() => restoreEnvironment());

it('counts a 429 as a client error by code and as RateLimited by plan', async () => {
  const body = JSON.stringify({ code: 'rate_limited', message: 'm', status: 429 });
  const lines = await emitted((metrics) => recordResponse(metrics, { statusCode: 429, body }, customer));
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ code: 'rate_limited', [metricNames.clientErrors]: 1, service: 'petstore' }),
      expect.objectContaining({ plan: 'free', [metricNames.rateLimited]: 1, service: 'petstore' }),
    ]),
  );
});

it('counts nothing for 2xx and 5xx responses in the client-error metrics', async () => {
  expect(await emitted((metrics) => recordResponse(metrics, { statusCode: 200, body: '[]' }, customer))).toEqual([]);
  expect(
    await emitted((metrics) => recordResponse(metrics, { statusCode: 503, body: '{"code":"service_unavailable"}' }, customer)),
  ).toEqual([]);
});

it("counts created pets of customers, in the answer's line, not those of the deployment check", async () => {
  const created = await emitted(() => {
    recordPetCreated(customer.keyId);
    recordAnswer(201, 35);
  });
  expect(created).toEqual([expect.objectContaining({ [metricNames.petsCreated]: 1, [metricNames.answerLatency]: 35 })]);
  // Read with the business dimensions (the dashboard's), not per version.
  expect((created[0]!._aws as { CloudWatchMetrics: unknown[] }).CloudWatchMetrics).toContainEqual({
    Namespace: businessMetrics.namespace,
    Dimensions: [['service', 'stage']],
    Metrics: [{ Name: metricNames.petsCreated, Unit: 'Count' }],
  });
  // The next answer created nothing.
  expect((await emitted(() => recordAnswer(200, 3)))[0]).not.toHaveProperty(metricNames.petsCreated);
  const checked = await emitted(() => {
    recordPetCreated(check.keyId);
    recordAnswer(201, 35);
  });
  expect(checked[0]).not.toHaveProperty(metricNames.petsCreated);
  const body = JSON.stringify({ code: 'rate_limited', message: 'm', status: 429 });
  expect(await emitted((metrics) => recordResponse(metrics, { statusCode: 429, body }, check))).toEqual([]);
});

describe('answers per version (the canary metrics)', () => {
  it('a 500 counts as ServerErrors, a 503 as Unavailable, every answer as one AnswerLatency sample', async () => {
    const [ok] = await emitted(() => recordAnswer(201, 35));
    const [bug] = await emitted(() => recordAnswer(500, 12));
    const [down] = await emitted(() => recordAnswer(503, 2_100));
    expect(ok).toMatchObject({ [metricNames.answerLatency]: 35 });
    expect(ok).not.toHaveProperty(metricNames.serverErrors);
    expect(bug).toMatchObject({ [metricNames.answerLatency]: 12, [metricNames.serverErrors]: 1 });
    expect(bug).not.toHaveProperty(metricNames.unavailable);
    expect(down).toMatchObject({ [metricNames.answerLatency]: 2_100, [metricNames.unavailable]: 1 });
    expect(down).not.toHaveProperty(metricNames.serverErrors);
  });

  it('carry the stage, the function and the version that answered (from the environment), and the function across versions', async () => {
    const [line] = await emitted(() => recordAnswer(500, 12));
    expect(line).toMatchObject({
      stage: 'production',
      function: 'createPet',
      version: lambdaEnvironment.AWS_LAMBDA_FUNCTION_VERSION,
    });
    expect(dimensionSets(line!)).toEqual([
      ['function', 'stage', 'version'],
      ['function', 'stage'],
    ]);
    // No service dimension: the namespace holds one service, and every answer writes the line.
    expect(line).not.toHaveProperty('service');
  });

  it('every custom metric line carries the stage in every dimension set', async () => {
    const lines = [
      ...(await emitted((metrics) => recordResponse(metrics, { statusCode: 429, body: '{"code":"rate_limited"}' }, customer))),
      ...(await emitted(() => {
        recordPetCreated(customer.keyId);
        recordAnswer(503, 1);
        recordAuthorizerOutcome('failed', 3);
      })),
    ];
    expect(lines.length).toBe(4);
    for (const line of lines) for (const set of dimensionSets(line)) expect(set).toContain('stage');
    // "The values within this array MUST also be members on the root node" (EMF specification, DimensionSet).
    for (const line of lines) for (const name of dimensionSets(line).flat()) expect(typeof line[name]).toBe('string');
  });
});

describe("the authorizer's outcomes", () => {
  const allow = { principalId: 'k', policyDocument: { Statement: [{ Effect: 'Allow' }] } };
  const deny = { principalId: 'k', policyDocument: { Statement: [{ Effect: 'Deny' }] } };

  it.each([
    ['allowed', async () => allow, {}],
    ['refused (a Deny)', async () => deny, { [metricNames.keysRefused]: 1 }],
    [
      'refused (401)',
      async () => {
        throw new Error('Unauthorized');
      },
      { [metricNames.keysRefused]: 1 },
    ],
    [
      'failed (the key store)',
      async () => {
        throw new Error('Key store unavailable');
      },
      { [metricNames.keyStoreFailures]: 1 },
    ],
  ])('%s', async (_name, handler, counted) => {
    const lines = await emitted(() => withAuthorizerOutcomes(handler as () => Promise<typeof allow>)({}).catch(() => undefined));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ ...counted, function: 'createPet', version: '42', stage: 'production' });
    expect(dimensionSets(lines[0]!)).toEqual([
      ['function', 'stage', 'version'],
      ['function', 'stage'],
    ]);
    expect(lines[0]![metricNames.keyCheckLatency]).toEqual(expect.any(Number));
    for (const other of [metricNames.keysRefused, metricNames.keyStoreFailures]) {
      if (!(other in counted)) expect(lines[0]).not.toHaveProperty(other);
    }
  });
});
