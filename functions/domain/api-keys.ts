import { createHash, randomBytes } from 'node:crypto';
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

/** A fresh key: the secret (show it once) and the record to store. */
export function generateApiKey(input: { plan: PlanName; owner: string; customLimits?: PlanLimits; now: number }): NewApiKey {
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
      // API Gateway wants 20-128 alphanumeric characters.
      meteringKey: randomBytes(24).toString('hex'),
      createdAt: timestamp,
      updatedAt: timestamp,
    },
  };
}

/**
 * The token of an `Authorization: Bearer <token>` header (scheme matched
 * case-insensitively, RFC 6750), or undefined when the header is anything else.
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^bearer +([^\s]+) *$/i.exec(authorization ?? '');
  return match?.[1];
}

/** Whether a stored key may be used at `now`. */
export function isUsable(record: ApiKeyRecord, now: number): boolean {
  if (record.status !== 'active') return false;
  return record.expiresAt === undefined || Date.parse(record.expiresAt) > now;
}
