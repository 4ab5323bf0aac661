import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deploymentCheckKey } from '../../definitions/deployment-check';
import { customerUsagePlan, pooledUsagePlan } from '../../definitions/usage-plan-limits';
import { LocalUsagePlans, usagePlansOfKeyTool } from '../../local/usage-plans';

/**
 * npm start's usage plans, by metering key, as the key tool's local target
 * writes them and the gateway (another process) reads them: what was set last
 * is what the next request gets.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'usage-plans-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const meteringKey = 'a'.repeat(48);

it('the gateway sees each change the key tool makes, at its next read; a plan that limits nothing is no file', () => {
  const keyTool = new LocalUsagePlans(dir);
  const gateway = new LocalUsagePlans(dir);
  expect(gateway.of(meteringKey)).toBeUndefined();
  keyTool.set(meteringKey, 'key_0123456789abcdef', customerUsagePlan({ perMinute: 5, perDay: 100 }));
  expect(gateway.of(meteringKey)).toEqual({ throttle: { rateLimit: 1, burstLimit: 10 } });
  keyTool.set(meteringKey, 'key_0123456789abcdef', customerUsagePlan({ perMinute: 600, perDay: 1_000 }));
  expect(gateway.of(meteringKey)).toEqual({ throttle: { rateLimit: 20, burstLimit: 1_200 } });
  keyTool.set(meteringKey, 'key_0123456789abcdef', pooledUsagePlan);
  expect(gateway.of(meteringKey)).toBeUndefined();
  expect(readdirSync(dir)).toEqual([]);
});

it('a metering key is API Gateway’s 20 to 128 letters and digits, never a path', () => {
  const plans = new LocalUsagePlans(dir);
  expect(() => plans.set('../escape-0123456789abcdef', 'key_0123456789abcdef', customerUsagePlan({ perMinute: 5, perDay: 5 }))).toThrow(
    'A metering key is 20 to 128 letters and digits',
  );
  expect(plans.of('../escape-0123456789abcdef')).toBeUndefined();
});

it('the gateway applies the key tool’s plan, the deployment check key its own, any other key a plan that limits nothing', () => {
  const plans = new LocalUsagePlans(dir);
  plans.set(meteringKey, 'key_0123456789abcdef', customerUsagePlan({ perMinute: 5, perDay: 100 }));
  const usagePlanOf = usagePlansOfKeyTool(plans);
  // The context is the (possibly cached) authorizer answer's: its plan and limits change nothing.
  expect(usagePlanOf(meteringKey, { plan: 'enterprise', perMinute: '600', perDay: '1000' })).toEqual(
    customerUsagePlan({ perMinute: 5, perDay: 100 }),
  );
  expect(usagePlanOf('b'.repeat(48), { plan: 'enterprise', perMinute: '5', perDay: '100' })).toEqual(pooledUsagePlan);
  expect(usagePlanOf('c'.repeat(48), { keyId: `${deploymentCheckKey.keyIdPrefix}0123456789ab` })).toEqual(deploymentCheckKey.usagePlan);
});
