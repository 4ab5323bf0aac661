import { createHash, randomBytes } from 'node:crypto';
import { unreadableTextReason } from '../../definitions/fields/readable-text';
import type { PlanLimits, PlanName } from '../../definitions/plans';

/**
 * API keys are 32 random bytes behind a recognisable prefix, e.g.
 * `psk_Zm9vYmFy...` (47 characters). Only their SHA-256 hash is stored.
 */
export const API_KEY_PREFIX = 'psk_';
const API_KEY_PATTERN = /^psk_[A-Za-z0-9_-]{43}$/;
/** How much of a key is shown in listings: enough to recognise, useless to attack. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

export type ApiKeyStatus = 'active' | 'revoked' | 'suspended';

export interface ApiKeyRecord {
  keyHash: string;
  keyId: string;
  /** The first characters of the secret, for people to recognise a key. */
  displayPrefix: string;
  plan: PlanName;
  owner: string;
  status: ApiKeyStatus;
  /** Enterprise keys carry their own limits. */
  customLimits?: PlanLimits;
  /**
   * The value of the API Gateway API key that meters this key in its usage plan
   * (returned by the authorizer as usageIdentifierKey). Not the client's secret.
   */
  meteringKey: string;
  createdAt: string;
  updatedAt: string;
  /** After this instant the key no longer works (set when a key is rotated). */
  expiresAt?: string;
  /**
   * The key id whose rate-limit counters this key counts on; absent: its own.
   * A rotation's successor inherits its predecessor's, so that the old and the
   * new secret share one set of limits during the grace: the limits (and a
   * ban) are the customer's, not the secret's.
   */
  countersId?: string;
}

export interface NewApiKey {
  secret: string;
  record: ApiKeyRecord;
}

export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/** The key id whose rate-limit counters a key counts on (see ApiKeyRecord.countersId). */
export function countersIdOf(record: Pick<ApiKeyRecord, 'keyId' | 'countersId'>): string {
  return record.countersId ?? record.keyId;
}

/**
 * A fresh key: the secret (show it once) and the record to store. `countersId`
 * is for a rotation's successor: the counters of the key it replaces.
 */
export function generateApiKey(input: {
  plan: PlanName;
  owner: string;
  customLimits?: PlanLimits;
  countersId?: string;
  now: number;
}): NewApiKey {
  const secret = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const timestamp = new Date(input.now).toISOString();
  return {
    secret,
    record: {
      keyHash: hashApiKey(secret),
      keyId: `key_${randomBytes(8).toString('hex')}`,
      displayPrefix: secret.slice(0, DISPLAY_PREFIX_LENGTH),
      plan: input.plan,
      owner: input.owner,
      status: 'active',
      ...(input.customLimits ? { customLimits: input.customLimits } : {}),
      ...(input.countersId !== undefined ? { countersId: input.countersId } : {}),
      // API Gateway wants 20-128 alphanumeric characters.
      meteringKey: randomBytes(24).toString('hex'),
      createdAt: timestamp,
      updatedAt: timestamp,
    },
  };
}

/**
 * What a key is at `now`, one word per state, the same in the key tool and the docs:
 * `active`; `expired`, a rotated key past its grace (401); `revoked` (401);
 * `suspended`, banned by the rate limiter for calling on after its 429s
 * (429 `key_suspended`) until `suspendedUntilMs`. A stored status other than
 * active (the legacy `suspended`, 401) is reported as it is stored.
 */
export const keyStates = ['active', 'expired', 'revoked', 'suspended'] as const;
export type KeyState = (typeof keyStates)[number];

export function keyState(record: ApiKeyRecord, now: number, suspendedUntilMs?: number): KeyState {
  if (record.status !== 'active') return record.status;
  if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now) return 'expired';
  return suspendedUntilMs !== undefined && suspendedUntilMs > now ? 'suspended' : 'active';
}

/** Whether the authorizer lets a stored key through at `now` (a ban is the rate limiter's 429, after it). */
export function isUsable(record: ApiKeyRecord, now: number): boolean {
  return keyState(record, now) === 'active';
}

/** The owner of a key is shown to people in listings: the same readability rule as a pet's name. */
export function ownerProblem(owner: string): string | undefined {
  if (owner.length > 200) return 'must be at most 200 characters';
  return unreadableTextReason(owner);
}
