import { pooledKeyName, pooledMeteringKey } from '../../definitions/metering-pool';
import { customersPerPooledKey, customerUsagePlan, pooledUsagePlan, usagePlanLimits } from '../../definitions/usage-plan-limits';
import { generateApiKey } from '../../functions/customers';
import { meteringPoolFromEnvironment, meteringSlot, usageIdentifierKeyOf } from '../../functions/domain/metering';
import { stageDimensions } from '../../functions/runtime/metrics';

const pool = { prefix: '0f3e4c1a11114b5c9d8e7f6a5b4c3d2e', keysPerPlan: 10 };
const record = (plan: 'free' | 'pro' | 'business' | 'enterprise') =>
  generateApiKey({ plan, owner: 'Acme', now: 0, ...(plan === 'enterprise' ? { customLimits: { perMinute: 10, perDay: 100 } } : {}) })
    .record;

describe('the pooled key of a customer', () => {
  test('is stable: the same customer always gets the same slot, whatever its plan', () => {
    const { customerId } = record('free');
    expect(meteringSlot(customerId, 10)).toBe(meteringSlot(customerId, 10));
    const free = usageIdentifierKeyOf({ customerId, plan: 'free', meteringKey: 'x' }, pool);
    const pro = usageIdentifierKeyOf({ customerId, plan: 'pro', meteringKey: 'x' }, pool);
    expect(free.slice(-3)).toBe(pro.slice(-3));
    expect(free).not.toBe(pro);
  });

  test('values are alphanumeric, 20 to 128 characters, as API Gateway wants', () => {
    for (const plan of ['free', 'pro', 'business'] as const) {
      expect(pooledMeteringKey(pool.prefix, plan, 999)).toMatch(/^[A-Za-z0-9]{20,128}$/);
    }
    expect(pooledKeyName('production', 'pro', 3)).toBe('petstore-production-pro-pool-3');
  });

  test('Enterprise keys keep their own metering key; without a pool (local), every key does', () => {
    const enterprise = record('enterprise');
    expect(usageIdentifierKeyOf(enterprise, pool)).toBe(enterprise.meteringKey);
    const free = record('free');
    expect(usageIdentifierKeyOf(free, undefined)).toBe(free.meteringKey);
    expect(usageIdentifierKeyOf(free, pool)).toBe(pooledMeteringKey(pool.prefix, 'free', meteringSlot(free.customerId, 10)));
  });

  test('spreads keys over every slot', () => {
    const slots = new Set(Array.from({ length: 500 }, () => meteringSlot(record('pro').customerId, 10)));
    expect(slots.size).toBe(10);
  });

  test('refuses a pool of no keys', () => {
    expect(() => meteringSlot('key_0123456789abcdef', 0)).toThrow(/keysPerPlan must be a whole number/);
  });
});

describe('the pool the stack describes to the authorizer', () => {
  test('is read from the environment, and absent locally', () => {
    expect(meteringPoolFromEnvironment({ METERING_POOL_PREFIX: pool.prefix, METERING_POOL_KEYS_PER_PLAN: '10' })).toEqual(pool);
    expect(meteringPoolFromEnvironment({})).toBeUndefined();
  });

  test('a malformed pool fails loudly (a cold start error), not silently per request', () => {
    expect(() => meteringPoolFromEnvironment({ METERING_POOL_PREFIX: 'has-dashes', METERING_POOL_KEYS_PER_PLAN: '10' })).toThrow();
    expect(() => meteringPoolFromEnvironment({ METERING_POOL_PREFIX: pool.prefix, METERING_POOL_KEYS_PER_PLAN: '0' })).toThrow();
  });
});

describe('sizing a pooled key', () => {
  test('carries at least its share, more for the hash imbalance, never more than the whole plan', () => {
    for (const [customers, keys] of [
      [60, 10],
      [500, 10],
      [4_000, 10],
      [100_000, 10],
    ] as const) {
      const carried = customersPerPooledKey(customers, keys);
      expect(carried).toBeGreaterThanOrEqual(Math.ceil(customers / keys));
      expect(carried).toBeLessThanOrEqual(customers);
    }
    expect(customersPerPooledKey(0, 10)).toBe(1);
    expect(customersPerPooledKey(60, 1)).toBe(60);
  });

  test('the bound holds: the busiest of 10 pooled keys of 4,000 random keys stays under it', () => {
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 4_000; i++) counts[meteringSlot(record('free').customerId, 10)]!++;
    expect(Math.max(...counts)).toBeLessThanOrEqual(customersPerPooledKey(4_000, 10));
  });

  test("a pooled key's usage plan limits nothing; one customer's own is a throttle with no quota, full again a minute after it is emptied", () => {
    expect(pooledUsagePlan).toEqual({});
    const limits = { perMinute: 300, perDay: 10_000 };
    const one = usagePlanLimits(limits);
    expect(customerUsagePlan(limits)).toEqual({ throttle: { rateLimit: one.rateLimit, burstLimit: one.burstLimit } });
    expect(one.burstLimit / one.rateLimit).toBeLessThanOrEqual(60);
  });
});

test('business metrics carry the stage the stack sets, so stages sharing an account stay apart', () => {
  expect(stageDimensions({ PETSTORE_STAGE: 'staging' })).toEqual({ stage: 'staging' });
  expect(stageDimensions({})).toEqual({});
});
