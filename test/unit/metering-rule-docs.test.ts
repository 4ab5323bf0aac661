import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pooledMeteringKey } from '../../definitions/metering-pool';
import { generateApiKey } from '../../functions/customers';
import { meteringSlot, usageIdentifierKeyOf } from '../../functions/domain/metering';
import { projectRoot } from '../../lib/project-root';
import { stages } from '../../lib/stage-config';

/**
 * The metering rule as the docs state it and as the authorizer applies it: a
 * fixed-plan customer is metered by the pooled key `SHA-256(customer id) mod N`
 * of its plan, so a rotation's successor is metered by the key its predecessor
 * was. Fails when the code picks by anything else (the key id, as it once did)
 * or when a doc says it does.
 */
const read = (file: string) => readFileSync(join(projectRoot, file), 'utf8');
const docs = ['docs/operators.md', 'docs/architecture.md', 'docs/decisions.md', 'SCALING.md'].map((file) => [file, read(file)] as const);
const operators = read('docs/operators.md');

/** The slot the docs' formula gives: the first 32 bits of SHA-256 of the id, mod N. */
const documentedSlot = (id: string, keysPerPlan: number) => createHash('sha256').update(id).digest().readUInt32BE(0) % keysPerPlan;

it("docs/operators.md states the rule as SHA-256(customer id) mod the stages' pool size", () => {
  const formula = /the authorizer picks the pooled key `SHA-256\(([^)]+)\) mod (\d+)`/.exec(operators);
  expect(formula?.[1]).toBe('customer id');
  for (const stage of Object.values(stages)) expect(Number(formula?.[2])).toBe(stage.meteringKeysPerPlan);
  expect(operators).toMatch(
    /a rotation's successor\s+is metered by the same pooled key as the secret it replaces, the one its customer id picks/,
  );
});

it('no doc says the pooled key is picked by the key id', () => {
  for (const [file, text] of docs) {
    expect([file, text.match(/SHA-256\(key id\)|SHA-256 of the key id|hash of its key id|pooled key its own key id picks/g)]).toEqual([
      file,
      null,
    ]);
  }
});

it("the authorizer's pooled key is the documented one of the customer id, for every secret of the customer", () => {
  const pool = { prefix: '0f3e4c1a11114b5c9d8e7f6a5b4c3d2e', keysPerPlan: stages.production.meteringKeysPerPlan };
  const first = generateApiKey({ plan: 'pro', owner: 'Acme', now: 0 }).record;
  // Successors until one whose own key id would pick another slot: then only the customer id explains the answer.
  let successor = generateApiKey({ plan: 'pro', owner: 'Acme', customerId: first.customerId, now: 1 }).record;
  for (
    let i = 0;
    i < 1_000 && documentedSlot(successor.keyId, pool.keysPerPlan) === documentedSlot(first.customerId, pool.keysPerPlan);
    i++
  ) {
    successor = generateApiKey({ plan: 'pro', owner: 'Acme', customerId: first.customerId, now: 1 }).record;
  }
  expect(successor.keyId).not.toBe(first.keyId);
  expect(documentedSlot(successor.keyId, pool.keysPerPlan)).not.toBe(documentedSlot(first.customerId, pool.keysPerPlan));
  const documented = pooledMeteringKey(pool.prefix, 'pro', documentedSlot(first.customerId, pool.keysPerPlan));
  expect(usageIdentifierKeyOf(first, pool)).toBe(documented);
  expect(usageIdentifierKeyOf(successor, pool)).toBe(documented);
  expect(meteringSlot(first.customerId, pool.keysPerPlan)).toBe(documentedSlot(first.customerId, pool.keysPerPlan));
});
