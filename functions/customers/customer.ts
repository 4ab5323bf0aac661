import { createHash, randomBytes } from 'node:crypto';
import { deploymentCheckKey, deploymentCheckKeyId } from '../../definitions/deployment-check';
import { readableTextReason } from '../../definitions/fields/readable-text';
import { type PlanLimits, type PlanName, plans } from '../../definitions/plans';

/**
 * API keys are 32 random bytes behind a recognisable prefix, e.g.
 * `psk_Zm9vYmFy...` (47 characters). Only their SHA-256 hash is stored.
 */
export const API_KEY_PREFIX = 'psk_';
const API_KEY_PATTERN = /^psk_[A-Za-z0-9_-]{43}$/;
/** How much of a key is shown in listings: enough to recognise, useless to attack. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** What is stored of a secret's state: only a revocation is written; `expired` and `suspended` follow from times (keyState). */
export type StoredKeyState = 'active' | 'revoked';

/**
 * The customer: the unit of a plan (decision 14). One record per customer holds
 * its plan, its limits and the usage plan that meters it; its rate-limit
 * counters and ban are kept under its id (rate-limit/counter-table.ts). Its
 * secrets (one, two during a rotation's grace) are credentials of it and carry
 * nothing of their own but their state.
 */
export interface Customer {
  /** The id of the customer's first secret: the name its counters and its Enterprise usage plan already carry. */
  customerId: string;
  plan: PlanName;
  owner: string;
  /** Enterprise customers carry their own limits. */
  customLimits?: PlanLimits;
  /**
   * The value of the API Gateway API key that meters this customer in its usage
   * plan (returned by the authorizer as usageIdentifierKey). Not a client's secret.
   */
  meteringKey: string;
  createdAt: string;
  /** The customer's own last change (a plan): a change is conditional on it, so two administrators never interleave. */
  customerUpdatedAt: string;
  /**
   * The hashes of every secret of the customer (revoked ones stay), written in
   * the transaction that writes a secret: a consistent read of the customer
   * finds them all, where an index may lag behind its table (decision 16).
   */
  secretHashes: string[];
}

/** One secret of a customer: its hash, its state and its times. */
export interface Secret {
  keyHash: string;
  keyId: string;
  customerId: string;
  /** The first characters of the secret, for people to recognise a key. */
  displayPrefix: string;
  status: StoredKeyState;
  createdAt: string;
  updatedAt: string;
  /** After this instant the secret no longer works (set when it is rotated). */
  expiresAt?: string;
}

/** A customer with its secrets (one, two during a rotation's grace; revoked ones stay), as the key table holds them. */
export interface CustomerSecrets {
  customer: Customer;
  secrets: Secret[];
}

/**
 * One key as the key tool shows it (its per-key views and messages): a secret
 * with its customer's plan, limits and metering key. Everything else speaks of
 * the customer and its secrets apart (`Customer`, `Secret`, `CustomerSecrets`).
 */
export type ApiKeyRecord = Secret & Omit<Customer, 'createdAt' | 'secretHashes'>;

export interface NewApiKey {
  secret: string;
  record: ApiKeyRecord;
}

export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** The display prefix of a secret: what listings and messages may show of it. */
export function displayPrefixOf(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}

export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/**
 * A fresh key: the secret (show it once) and the record to store. The one
 * place a customer is built: a new customer's first key names the customer; a
 * rotation's successor passes the customer it is a credential of
 * (`customerId`), whose plan it then has. The deployment check and `npm
 * start`'s development key bring a secret of their own (`given`, with the
 * check's own key id).
 */
export function generateApiKey(input: {
  plan: PlanName;
  owner: string;
  customLimits?: PlanLimits;
  customerId?: string;
  meteringKey?: string;
  customerUpdatedAt?: string;
  given?: { secret: string; keyId?: string };
  now: number;
}): NewApiKey {
  const secret = input.given?.secret ?? API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const timestamp = new Date(input.now).toISOString();
  const keyId = input.given?.keyId ?? `key_${randomBytes(8).toString('hex')}`;
  return {
    secret,
    record: {
      keyHash: hashApiKey(secret),
      keyId,
      displayPrefix: displayPrefixOf(secret),
      plan: input.plan,
      owner: input.owner,
      status: 'active',
      ...(input.customLimits ? { customLimits: input.customLimits } : {}),
      customerId: input.customerId ?? keyId,
      // API Gateway wants 20-128 alphanumeric characters.
      meteringKey: input.meteringKey ?? randomBytes(24).toString('hex'),
      createdAt: timestamp,
      updatedAt: timestamp,
      customerUpdatedAt: input.customerUpdatedAt ?? timestamp,
    },
  };
}

/**
 * The deployment check's customer: an Enterprise customer of its own, metered
 * by its own API Gateway key, with the check's key as its first secret (named,
 * like any first secret, by the customer's id: deploymentCheckKeyId).
 */
export function checkCustomer(key: string, meteringKey: string, now: number): ApiKeyRecord {
  const keyId = deploymentCheckKeyId(hashApiKey(key));
  const { owner, limits } = deploymentCheckKey;
  return generateApiKey({ plan: 'enterprise', owner, customLimits: { ...limits }, meteringKey, given: { secret: key, keyId }, now }).record;
}

/** Who a working secret's caller is, as the authorizer tells the operations: its customer, plan and limits. */
export function callerOf(secret: Pick<Secret, 'keyId'>, customer: Pick<Customer, 'customerId' | 'plan' | 'customLimits'>) {
  return { keyId: secret.keyId, customerId: customer.customerId, plan: customer.plan, limits: limitsOf(customer) };
}

/** What metering (API Gateway's usage plans) knows of a customer: its id, plan and limits, and the value of the API key that meters it. */
export interface MeteredCustomer extends Pick<Customer, 'customerId' | 'plan' | 'meteringKey'> {
  limits: PlanLimits;
}

export function meteringOf(customer: Pick<Customer, 'customerId' | 'plan' | 'customLimits' | 'meteringKey'>): MeteredCustomer {
  return { customerId: customer.customerId, plan: customer.plan, meteringKey: customer.meteringKey, limits: limitsOf(customer) };
}

/**
 * What a key is at `now`, one word per state, the same in the key tool and the docs:
 * `active`; `expired`, a rotated key past its grace (401); `revoked` (401);
 * `suspended`, banned by the rate limiter for calling on after its 429s
 * (429 `key_suspended`) until `bannedUntilMs`.
 */
export const keyStates = ['active', 'expired', 'revoked', 'suspended'] as const;
export type KeyState = (typeof keyStates)[number];

export function keyState(record: Pick<Secret, 'status' | 'expiresAt'>, now: number, bannedUntilMs?: number): KeyState {
  if (record.status !== 'active') return record.status;
  if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now) return 'expired';
  return bannedUntilMs !== undefined && bannedUntilMs > now ? 'suspended' : 'active';
}

/** Whether the authorizer lets a stored key through at `now` (a ban is the rate limiter's 429, after it). */
export function isUsable(record: Pick<Secret, 'status' | 'expiresAt'>, now: number): boolean {
  return keyState(record, now) === 'active';
}

/**
 * The limits a customer is held to: its plan's (definitions/plans.ts), or its
 * own for Enterprise. The one place a plan becomes limits: the authorizer, the
 * key tool, metering and the limiter's copy all take them from here.
 */
export function limitsOf(customer: Pick<Customer, 'plan' | 'customLimits'>): PlanLimits {
  const limits = plans[customer.plan].limits;
  if (limits !== 'custom') return limits;
  const custom = customer.customLimits;
  if (!custom?.perMinute || !custom.perDay) throw new Error('An enterprise customer needs its own perMinute and perDay limits.');
  return { perMinute: custom.perMinute, perDay: custom.perDay };
}

/** The owner of a key is shown to people in listings: the same rule as a pet's name, up to 200 characters. */
export function ownerProblem(owner: string): string | undefined {
  return readableTextReason(owner, 200);
}
