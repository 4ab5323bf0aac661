import { ApiKeyChangedError, type ApiKeyRecord, CustomerTable, generateApiKey, joined, secretOf } from '../../functions/customers';
import { ApiError } from '../../functions/domain/errors';
import { CounterTable, RateLimiter } from '../../functions/rate-limit';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { createTestTables, testDependencies } from '../support/dynamo';

/**
 * The administration side of the keys table on DynamoDB Local: lookups by key
 * id, and updates that are conditional on the record being as it was read, so
 * two administrators at once never leave half of one change and half of another.
 */
let dependencies: Dependencies;
let keys: CustomerTable;
const at = (iso: string) => Date.parse(iso);

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
  keys = new CustomerTable(dependencies.db, dependencies.tableNames);
});
afterAll(() => dependencies.db.destroy());

async function stored(plan: ApiKeyRecord['plan'] = 'pro'): Promise<ApiKeyRecord> {
  const { record } = generateApiKey({
    plan,
    owner: 'Acme',
    now: at('2029-06-01T12:00:00Z'),
    ...(plan === 'enterprise' ? { customLimits: { perMinute: 10, perDay: 100 } } : {}),
  });
  await keys.insert(record);
  return record;
}

it('finds a key by its id through the byKeyId index, and nothing for an unknown id', async () => {
  const record = await stored();
  expect(await keys.findById(record.keyId)).toEqual(record);
  expect(await keys.findById('key_0000000000000000')).toBeUndefined();
});

it('finds a customer with its secrets, named on its own item and read strongly, and nothing of another customer', async () => {
  const record = await stored('enterprise');
  const successor = generateApiKey({ ...record, now: at('2029-06-01T12:00:01Z') }).record;
  await keys.insertSuccessor(successor, record, '2029-06-01T13:00:00.000Z');
  const other = await stored('enterprise');
  const found = await keys.customerWithSecrets(record.customerId);
  expect(found?.customer).toMatchObject({ customerId: record.customerId, plan: 'enterprise', customLimits: record.customLimits });
  expect(found?.secrets.map((secret) => secret.keyId).sort()).toEqual([record.keyId, successor.keyId].sort());
  expect(found?.secrets.every((secret) => secret.customerId === record.customerId)).toBe(true);
  expect(found?.secrets).toContainEqual(secretOf({ ...record, expiresAt: '2029-06-01T13:00:00.000Z', updatedAt: successor.createdAt }));
  const ofOther = await keys.customerWithSecrets(other.customerId);
  expect(ofOther && joined(ofOther.secrets[0]!, ofOther.customer)).toEqual(other);
  expect(ofOther?.secrets).toHaveLength(1);
  expect(await keys.customerWithSecrets('key_0000000000000000')).toBeUndefined();
});

it('lists every key', async () => {
  const records = await Promise.all(Array.from({ length: 5 }, () => stored('free')));
  const all = await keys.scanAll();
  for (const record of records) expect(all).toContainEqual(record);
});

it('changes a plan, sets or removes custom limits, and refuses a record changed since it was read', async () => {
  const record = await stored('enterprise');
  const moved = await keys.changePlan(record, record, { plan: 'pro' }, '2029-06-01T12:01:00.000Z');
  expect(moved).toMatchObject({ plan: 'pro', customerUpdatedAt: '2029-06-01T12:01:00.000Z' });
  expect(moved.customLimits).toBeUndefined();
  await expect(keys.changePlan(record, record, { plan: 'free' }, '2029-06-01T12:02:00.000Z')).rejects.toThrow(ApiKeyChangedError);
  expect(await keys.findById(record.keyId)).toEqual(moved);
  const back = await keys.changePlan(
    moved,
    moved,
    { plan: 'enterprise', customLimits: { perMinute: 20, perDay: 200 } },
    '2029-06-01T12:03:00.000Z',
  );
  expect(back.customLimits).toEqual({ perMinute: 20, perDay: 200 });
});

it('revokes once; a revoked key cannot change plan', async () => {
  const record = await stored();
  const revoked = await keys.revoke(record, '2029-06-01T12:01:00.000Z');
  expect(revoked.status).toBe('revoked');
  await expect(keys.revoke(revoked, '2029-06-01T12:02:00.000Z')).rejects.toThrow(ApiKeyChangedError);
  await expect(keys.changePlan(revoked, revoked, { plan: 'free' }, '2029-06-01T12:02:00.000Z')).rejects.toThrow(ApiKeyChangedError);
});

it('stores a successor and the predecessor expiry together, or neither', async () => {
  const record = await stored();
  const first = generateApiKey({ ...record, now: at('2029-06-01T12:05:00Z') }).record;
  await keys.insertSuccessor(first, record, '2029-06-02T12:05:00.000Z');
  expect(await keys.findById(first.keyId)).toEqual(first);
  expect(await keys.findById(record.keyId)).toMatchObject({ expiresAt: '2029-06-02T12:05:00.000Z', updatedAt: first.createdAt });

  // Rotating the same (now stale) record again writes nothing at all.
  const second = generateApiKey({ ...record, now: at('2029-06-01T12:06:00Z') }).record;
  await expect(keys.insertSuccessor(second, record, '2029-06-02T12:06:00.000Z')).rejects.toThrow(ApiKeyChangedError);
  expect(await keys.findById(second.keyId)).toBeUndefined();
  expect((await keys.findById(record.keyId))!.expiresAt).toBe('2029-06-02T12:05:00.000Z');
});

describe('key changes reach the functions through the counters, across midnight', () => {
  // Days from tomorrow on, from the real clock: DynamoDB Local's TTL sweeper must never find these counters expired.
  const day = (offset: number) => new Date((Math.floor(Date.now() / 86_400_000) + 1 + offset) * 86_400_000).toISOString().slice(0, 10);
  const counters = () => new CounterTable(dependencies.db, dependencies.tableNames.rateLimits);
  /** One request of the key through a fresh instance's limiter: counted (with the limit and the minute's count it reports), or refused. */
  const count = async (record: ApiKeyRecord, iso: string, limits = { perMinute: 300, perDay: 10_000 }) => {
    try {
      const { window, refusal } = await new RateLimiter(counters()).admit(
        { keyId: record.keyId, customerId: record.customerId, limits: limits },
        at(iso),
      );
      return refusal ? { kind: refusal.code } : { kind: 'counted', limit: window.limit, minuteGranted: window.limit - window.remaining };
    } catch (error) {
      if (error instanceof ApiError && error.code === 'unauthorized') return { kind: 'key_unusable' };
      throw error;
    }
  };

  it('a revocation 2 minutes before midnight is refused on both days the cached authorizer answer spans', async () => {
    const record = await stored();
    await keys.revoke(record, `${day(0)}T23:58:00.000Z`);
    expect(await count(record, `${day(0)}T23:58:01Z`)).toMatchObject({ kind: 'key_unusable' });
    expect(await count(record, `${day(1)}T00:02:59Z`)).toMatchObject({ kind: 'key_unusable' });
  });

  it('a rotated key is served until its expiry, refused from then on', async () => {
    const record = await stored();
    const { record: successor } = generateApiKey({ ...record, now: at('2029-06-01T12:00:00Z') });
    await keys.insertSuccessor(successor, record, `${day(2)}T09:00:00.000Z`);
    expect(await count(record, `${day(2)}T08:59:59Z`)).toMatchObject({ kind: 'counted' });
    expect(await count(record, `${day(2)}T09:00:00Z`)).toMatchObject({ kind: 'key_unusable' });
  });

  it('the keys of a rotation count on one item; revoking either one stops that one only', async () => {
    const record = await stored();
    const { record: successor } = generateApiKey({ plan: 'pro', owner: 'Acme', customerId: record.keyId, now: at('2029-06-01T12:00:00Z') });
    await keys.insertSuccessor(successor, record, `${day(4)}T00:00:00.000Z`);
    expect(await count(record, `${day(3)}T10:00:01Z`)).toMatchObject({ kind: 'counted', minuteGranted: 1 });
    expect(await count(successor, `${day(3)}T10:00:02Z`)).toMatchObject({ kind: 'counted', minuteGranted: 2 });
    await keys.revoke((await keys.findById(successor.keyId))!, `${day(3)}T10:00:03.000Z`);
    expect(await count(successor, `${day(3)}T10:00:04Z`)).toMatchObject({ kind: 'key_unusable' });
    expect(await count(record, `${day(3)}T10:00:05Z`)).toMatchObject({ kind: 'counted', minuteGranted: 3 });

    // The other way round: the old key revoked during its grace, its successor goes on.
    const other = await stored();
    const { record: next } = generateApiKey({ plan: 'pro', owner: 'Acme', customerId: other.keyId, now: at('2029-06-01T12:00:00Z') });
    await keys.insertSuccessor(next, other, `${day(4)}T00:00:00.000Z`);
    await keys.revoke((await keys.findById(other.keyId))!, `${day(3)}T11:00:00.000Z`);
    expect(await count(other, `${day(3)}T11:00:01Z`)).toMatchObject({ kind: 'key_unusable' });
    expect(await count(next, `${day(3)}T11:00:02Z`)).toMatchObject({ kind: 'counted', minuteGranted: 1 });
  });

  it('a plan change applies its limits to the next count, whatever limits the caller brought', async () => {
    const record = await stored('pro');
    expect(await count(record, `${day(0)}T12:00:01Z`)).toMatchObject({ kind: 'counted', limit: 300 });
    await keys.changePlan(record, record, { plan: 'free' }, `${day(0)}T12:00:02.000Z`);
    // The counter tells the caller's stale limits from the key's new ones, and the limiter counts the request under them.
    const verdict = await new RateLimiter(counters()).admit(
      { keyId: record.keyId, customerId: record.keyId, limits: { perMinute: 300, perDay: 10_000 } },
      at(`${day(0)}T12:00:04Z`),
    );
    expect(verdict.window).toEqual({ limit: 60, remaining: 58, resetSeconds: at(`${day(0)}T12:01:00Z`) / 1000 });
  });
});
