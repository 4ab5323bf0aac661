import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { deploymentCheckKey } from '../../../definitions/deployment-check';
import { type OperationId, routes } from '../../../definitions/routes';
import { checkCustomer, hashApiKey } from '../../../functions/customers';
import { type CheckTargets, type Invocation, runDeploymentCheck } from '../../../functions/deployment-check/check';
import { checkKeyFromSecret } from '../../../functions/deployment-check/check-key';

/** The check's verdicts on scripted answers of the new and live versions (the real handlers answer in test/integration/deployment-check.test.ts). */
const arn = (name: string, qualifier: string) => `arn:aws:lambda:eu-west-1:123456789012:function:PetStore-Production-${name}:${qualifier}`;
const pair = (name: string, version: string) => ({ version: arn(name, version), live: arn(name, 'live') });
const targets: CheckTargets = {
  authorizer: pair('Authorizer', '7'),
  operations: { listPets: pair('ListPets', '12'), createPet: pair('CreatePet', '9'), getPet: pair('GetPet', '4') },
};
const secret = `psk_${'A'.repeat(43)}`;
const context = {
  keyId: `${deploymentCheckKey.keyIdPrefix}0123456789ab`,
  customerId: `${deploymentCheckKey.keyIdPrefix}0123456789ab`,
  plan: 'enterprise',
  perMinute: '120',
  perDay: '5000',
};

const allowed: Invocation = { payload: { principalId: 'k', policyDocument: { Statement: [{ Effect: 'Allow' }] }, context } };
const refused: Invocation = { functionError: 'Unhandled', payload: { errorType: 'Error', errorMessage: 'Unauthorized' } };
const storeDown: Invocation = { functionError: 'Unhandled', payload: { errorType: 'Error', errorMessage: 'Key store unavailable' } };
const answer = (statusCode: number, body: unknown = {}): Invocation => ({
  payload: { statusCode, headers: {}, body: JSON.stringify(body) },
});
const good: Record<OperationId, Invocation> = { listPets: answer(200, []), createPet: answer(201, { id: 4242 }), getPet: answer(200) };

/** An invoke that answers by target, recording every call. */
function scripted(answers: Record<string, Invocation>) {
  const calls: { target: string; event: unknown }[] = [];
  const invoke = async (target: string, event: unknown) => {
    calls.push({ target, event });
    const scriptedAnswer = answers[target];
    if (!scriptedAnswer) throw new Error(`unexpected call of ${target}`);
    return scriptedAnswer;
  };
  return { invoke, calls };
}

const newVersions = (overrides: Partial<Record<OperationId | 'authorizer', Invocation>> = {}): Record<string, Invocation> => ({
  [targets.authorizer.version]: overrides.authorizer ?? allowed,
  ...Object.fromEntries(
    (Object.keys(targets.operations) as OperationId[]).map((id) => [targets.operations[id].version, overrides[id] ?? good[id]]),
  ),
});

it('a good new version: the authorizer allows the key, then every route of the route table is called once on its new version', async () => {
  const { invoke, calls } = scripted(newVersions());
  const report = await runDeploymentCheck(invoke, targets, secret, context);
  expect(report.passed).toBe(true);
  expect(report.findings.map((finding) => finding.verdict)).toEqual(['ok', 'ok', 'ok', 'ok']);
  expect(calls.map((call) => call.target)).toEqual([
    targets.authorizer.version,
    ...['listPets', 'createPet', 'getPet'].map((id) => targets.operations[id as OperationId].version),
  ]);
  expect(new Set(calls.slice(1).map((call) => (call.event as APIGatewayProxyEvent).resource))).toEqual(
    new Set(routes.map((route) => route.path)),
  );
  const authorizerEvent = calls[0]!.event as APIGatewayRequestAuthorizerEvent;
  expect(authorizerEvent.headers?.Authorization).toBe(`Bearer ${secret}`);
  expect(authorizerEvent.methodArn).toMatch(/^arn:aws:execute-api:eu-west-1:123456789012:[^/]+\/v1\/GET\/pets$/);
  for (const call of calls.slice(1)) expect((call.event as APIGatewayProxyEvent).requestContext.authorizer).toEqual(context);
  const [, , create, get] = calls.map((call) => call.event as APIGatewayProxyEvent);
  expect(create!.headers['Idempotency-Key']).toBe('"deployment-check-9"');
  expect(JSON.parse(create!.body ?? '')).toEqual({ name: deploymentCheckKey.petName, categoryId: 1, status: 'sold' });
  expect(get!.pathParameters).toEqual({ petId: '4242' });
  expect(get!.path).toBe('/pets/4242');
});

it.each([
  ['a new version that answers 500', { createPet: answer(500, { code: 'internal_error' }) }],
  ['a new version that crashes', { listPets: { functionError: 'Unhandled', payload: { errorMessage: 'boom' } } }],
  ['a new version answering another status than the route should', { getPet: answer(400) }],
  ['an authorizer that refuses the valid key', { authorizer: refused }],
  ['an authorizer that allows without a context', { authorizer: { payload: { policyDocument: { Statement: [{ Effect: 'Allow' }] } } } }],
])('fails the deployment: %s (without asking the live version)', async (_name, overrides) => {
  const { invoke, calls } = scripted(newVersions(overrides));
  const report = await runDeploymentCheck(invoke, targets, secret, context);
  expect(report.passed).toBe(false);
  expect(report.findings.filter((finding) => finding.verdict === 'failed')).toHaveLength(1);
  expect(calls.map((call) => call.target)).not.toContainEqual(expect.stringMatching(/:live$/));
});

describe('a 503, or a key it could not check: compared with the live version on the same request', () => {
  it('the live version fails the same way (a dependency in trouble): passes, so a fix can deploy during an incident', async () => {
    const { invoke, calls } = scripted({
      ...newVersions({ authorizer: storeDown, listPets: answer(503) }),
      [targets.authorizer.live]: storeDown,
      [targets.operations.listPets.live]: answer(503),
    });
    const report = await runDeploymentCheck(invoke, targets, secret, context);
    expect(report.passed).toBe(true);
    expect(report.findings.map((finding) => finding.verdict)).toEqual(['shared', 'shared', 'ok', 'ok']);
    expect(calls.filter((call) => call.target.endsWith(':live'))).toHaveLength(2);
    // Without the new authorizer's answer, the operations get the context the check's key stands for.
    for (const call of calls.filter((c) => !c.target.includes('Authorizer'))) {
      expect((call.event as APIGatewayProxyEvent).requestContext.authorizer).toEqual(context);
    }
  });

  it("the live version answers: the new version's trouble is its own, and the deployment fails", async () => {
    for (const [overrides, live] of [
      [{ authorizer: storeDown }, { [targets.authorizer.live]: allowed }],
      [{ getPet: answer(503) }, { [targets.operations.getPet.live]: answer(200) }],
    ] as const) {
      const { invoke } = scripted({ ...newVersions(overrides), ...live });
      expect((await runDeploymentCheck(invoke, targets, secret, context)).passed).toBe(false);
    }
  });
});

describe('the check key', () => {
  it('is psk_ and the stack-generated secret, refused when malformed', () => {
    expect(checkKeyFromSecret('b'.repeat(43))).toBe(`psk_${'b'.repeat(43)}`);
    expect(() => checkKeyFromSecret('too-short')).toThrow(/43 characters/);
  });

  it('is an Enterprise customer of its own, with its own metering key and limits, its secret stored by hash only', () => {
    const check = checkCustomer(secret, 'meteringvalue0123456789', Date.UTC(2026, 0, 1));
    const keyId = `${deploymentCheckKey.keyIdPrefix}${hashApiKey(secret).slice(0, 12)}`;
    expect(check).toMatchObject({
      customerId: keyId,
      plan: 'enterprise',
      customLimits: deploymentCheckKey.limits,
      meteringKey: 'meteringvalue0123456789',
      keyId,
      keyHash: hashApiKey(secret),
      status: 'active',
    });
    expect(JSON.stringify(check)).not.toContain(secret);
  });
});
