import { CustomerTable, generateApiKey } from '../../functions/customers';
import { IdempotencyRepository } from '../../functions/data/idempotency-repository';
import { PetRepository } from '../../functions/data/pet-repository';
import type { IdempotencyRecord } from '../../functions/domain/pet-creation';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { createTestTables, testDependencies } from '../support/dynamo';

/**
 * The three conditional writes that tell a repeat of our own write (the SDK's
 * retry after a lost answer) from another's by the item DynamoDB returns when
 * the condition fails: the repeat succeeds, the other is refused or returned.
 */
let dependencies: Dependencies;
beforeAll(async () => {
  dependencies = testDependencies(await createTestTables());
});
afterAll(() => dependencies.db.destroy());

it('a key stored again is success; another key with its hash is refused', async () => {
  const keys = new CustomerTable(dependencies.db, dependencies.tableNames);
  const { record } = generateApiKey({ plan: 'pro', owner: 'Acme', now: Date.now() });
  await keys.insert(record);
  await expect(keys.insert(record)).resolves.toBeUndefined();
  await expect(keys.insert({ ...record, keyId: 'key_other' })).rejects.toThrow(expect.objectContaining({ name: 'ApiKeyChangedError' }));
});

it('a pet written again with its write token is success; with another token it is refused', async () => {
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
  const pet = { id: 41, name: 'Rex', categoryId: 1, status: 'available' as const };
  await pets.insert(pet, new Date().toISOString(), 'token-1');
  await expect(pets.insert(pet, new Date().toISOString(), 'token-1')).resolves.toBeUndefined();
  await expect(pets.insert(pet, new Date().toISOString(), 'token-2')).rejects.toThrow(
    expect.objectContaining({ name: 'ConditionalCheckFailedException' }),
  );
});

it('a claim of a live record returns the stored record, not the one offered', async () => {
  const records = new IdempotencyRepository(dependencies.db, dependencies.tableNames.idempotency, () => Date.now());
  const record = (requestHash: string): IdempotencyRecord => ({
    id: 'key_1#abc',
    status: 'IN_PROGRESS',
    requestHash,
    pet: { id: 42, name: 'Rex', categoryId: 1, status: 'available' },
    createdAt: new Date().toISOString(),
    heldUntil: Date.now() + 10_000,
    expiration: Math.floor(Date.now() / 1000) + 86_400,
  });
  const first = record('hash-1');
  expect(await records.claim(first)).toEqual(first);
  expect(await records.claim(record('hash-2'))).toEqual(first);
});
