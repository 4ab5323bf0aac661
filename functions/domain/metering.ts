import { createHash } from 'node:crypto';
import { meteringPoolEnvironment, pooledMeteringKey } from '../../definitions/metering-pool';
import type { Customer } from '../customers';

/**
 * The pooled API Gateway API keys that meter fixed-plan customers: per plan,
 * `keysPerPlan` keys whose values are `<prefix><plan><slot>` (the CDK stack
 * creates them in the plan's usage plan, which limits nothing: it meters). Our
 * own counters enforce each key's exact limits, so customers can share them,
 * none spending another's allowance, and AWS's 10,000 API keys per account and
 * Region, which cannot be raised, no longer caps the number of customers
 * (decision 14).
 */
export interface MeteringPool {
  /** Unique per stack (from its stack id): values never clash between stages sharing an account. */
  prefix: string;
  keysPerPlan: number;
}

/**
 * The pooled key (0 … keysPerPlan − 1) of a customer: the first 32 bits of
 * SHA-256 of its customer id, modulo the pool size. A hash of the customer id
 * because it is stable (the id never changes, so a customer's slot never moves
 * unless the pool is resized, and a rotation's successor is metered where the
 * secret it replaces was), needs nothing stored (the authorizer and the key
 * tool compute the same slot, no counter item to contend on) and spreads
 * customers uniformly (definitions/usage-plan-limits.ts, customersPerPooledKey:
 * how many one pooled key's usage report mixes).
 */
export function meteringSlot(customerId: string, keysPerPlan: number): number {
  if (!Number.isSafeInteger(keysPerPlan) || keysPerPlan < 1) throw new Error(`keysPerPlan must be a whole number ≥ 1; got ${keysPerPlan}`);
  return createHash('sha256').update(customerId).digest().readUInt32BE(0) % keysPerPlan;
}

/**
 * What the authorizer returns as usageIdentifierKey: the pooled key of the
 * customer's plan, or for an Enterprise key (a usage plan of its own, with its
 * own limits) the value of its own API key. Without a pool (the local gateway,
 * which has no usage plans) the customer's own metering key.
 */
export function usageIdentifierKeyOf(
  customer: Pick<Customer, 'customerId' | 'plan' | 'meteringKey'>,
  pool: MeteringPool | undefined,
): string {
  if (!pool || customer.plan === 'enterprise') return customer.meteringKey;
  return pooledMeteringKey(pool.prefix, customer.plan, meteringSlot(customer.customerId, pool.keysPerPlan));
}

/** The pool the stack describes to the authorizer, if any. */
export function meteringPoolFromEnvironment(env: NodeJS.ProcessEnv = process.env): MeteringPool | undefined {
  const prefix = env[meteringPoolEnvironment.prefix];
  const keysPerPlan = env[meteringPoolEnvironment.keysPerPlan];
  if (!prefix || !keysPerPlan) return undefined;
  if (!/^[A-Za-z0-9]+$/.test(prefix) || !/^[1-9]\d*$/.test(keysPerPlan)) {
    throw new Error(`${meteringPoolEnvironment.prefix} must be alphanumeric and ${meteringPoolEnvironment.keysPerPlan} a whole number ≥ 1`);
  }
  return { prefix, keysPerPlan: Number(keysPerPlan) };
}
