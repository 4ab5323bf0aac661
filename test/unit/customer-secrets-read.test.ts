import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { issueKey, revokeKey, rotateKey } from '../../admin/key-admin';
import { localMetering, localTarget } from '../../admin/targets/local';
import type { TableName } from '../../definitions/tables';
import { createHandler } from '../../functions/authorizer/handler';
import { LocalUsagePlans } from '../../local/usage-plans';
import { requestAuthorizerEvent } from '../support/api-gateway-events';
import { SimulatedDynamoDB } from '../support/simulated-dynamodb';

/**
 * Decision 16: whatever decides from a customer's secrets reads them strongly.
 * A global secondary index is eventually consistent ("Read consistency",
 * Amazon DynamoDB Developer Guide: GSIs support eventually consistent reads
 * only), so an index may not yet hold a secret written a moment ago. The
 * simulated DynamoDB holds its indexes behind the tables on request.
 */
const tableNames: Record<TableName, string> = { pets: 'pets', apiKeys: 'keys', rateLimits: 'counters', idempotency: 'idempotency' };
const NOW = Date.UTC(2030, 5, 2, 12, 0, 0);
let usagePlansDir: string;

beforeEach(() => {
  usagePlansDir = mkdtempSync(join(tmpdir(), 'usage-plans-'));
});
afterEach(() => rmSync(usagePlansDir, { recursive: true, force: true }));

function world() {
  const store = new SimulatedDynamoDB(tableNames);
  const usagePlans = new LocalUsagePlans(usagePlansDir);
  const target = localTarget(store.client({ name: 'key-tool', mode: 'immediate' }), tableNames, { name: 'test' });
  const metered = { ...target, metering: localMetering(usagePlans) };
  const authorize = createHandler({ db: store.client({ name: 'authorizer', mode: 'immediate' }), tableNames, clock: () => NOW + 60_000 });
  const allows = async (secret: string) => {
    const answer = (await authorize(
      requestAuthorizerEvent({ method: 'GET', resource: '/pets', path: '/pets', headers: { Authorization: `Bearer ${secret}` } }),
    ).catch((error: Error) => error.message)) as APIGatewayAuthorizerResult | string;
    return typeof answer !== 'string' && answer.policyDocument.Statement.every((statement) => statement.Effect === 'Allow');
  };
  return { store, usagePlans, target: metered, allows };
}

it("revoking the old secret right after a rotation, while the index lags, keeps the new secret working and the customer's usage plan", async () => {
  const { store, usagePlans, target, allows } = world();
  const issued = await issueKey(target, { plan: 'enterprise', customLimits: { perMinute: 500, perDay: 50_000 }, owner: 'Initech' }, NOW);
  const meteringKey = (await target.keys.findById(issued.key.keyId))!.meteringKey;
  const ownPlan = usagePlans.of(meteringKey);
  expect(ownPlan).toMatchObject({ throttle: expect.any(Object) });

  // The index answers as of before the rotation: the successor is in the table only.
  store.holdIndexesBehind();
  const rotated = await rotateKey(target, issued.key.keyId, 0, NOW);
  const revoked = await revokeKey(target, issued.key.keyId, NOW + 1);

  expect(revoked.key.status).toBe('revoked');
  expect(await allows(rotated.secret)).toBe(true);
  // Metering not withdrawn: the Enterprise customer's own usage plan still meters its working secret.
  expect(usagePlans.of(meteringKey)).toEqual(ownPlan);
});

it('revoking the last working secret while the index lags withdraws the metering (the read is strong both ways)', async () => {
  const { store, usagePlans, target } = world();
  const issued = await issueKey(target, { plan: 'enterprise', customLimits: { perMinute: 500, perDay: 50_000 }, owner: 'Initech' }, NOW);
  const meteringKey = (await target.keys.findById(issued.key.keyId))!.meteringKey;
  store.holdIndexesBehind();
  await revokeKey(target, issued.key.keyId, NOW + 1);
  expect(usagePlans.of(meteringKey)).toBeUndefined();
});
