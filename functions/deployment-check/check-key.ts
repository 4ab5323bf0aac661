import { deploymentCheckKey, deploymentCheckKeyId } from '../../definitions/deployment-check';
import type { ApiKeyRepository } from '../data/api-key-repository';
import { API_KEY_PREFIX, type ApiKeyRecord, displayPrefixOf, hashApiKey, isWellFormedApiKey } from '../domain/api-keys';
import { toAuthorizerContext } from '../http/caller';

/**
 * The check's API key from the secret the stack generated (43 alphanumeric
 * characters): the key is `psk_` and the secret, like any key, so the
 * authorizer checks it the way it checks a customer's.
 */
export function checkKeyFromSecret(secretValue: string): string {
  const key = API_KEY_PREFIX + secretValue.trim();
  if (!isWellFormedApiKey(key)) throw new Error('The deployment-check secret is not 43 characters of A-Z, a-z, 0-9, - or _.');
  return key;
}

/** The check key's record: an Enterprise key of its own, metered by its own API Gateway key. */
export function checkKeyRecord(key: string, meteringKey: string, now: number): ApiKeyRecord {
  const timestamp = new Date(now).toISOString();
  const keyHash = hashApiKey(key);
  const keyId = deploymentCheckKeyId(keyHash);
  return {
    keyHash,
    keyId,
    customerId: keyId,
    displayPrefix: displayPrefixOf(key),
    plan: 'enterprise',
    owner: deploymentCheckKey.owner,
    status: 'active',
    customLimits: { ...deploymentCheckKey.limits },
    meteringKey,
    createdAt: timestamp,
    updatedAt: timestamp,
    customerUpdatedAt: timestamp,
  };
}

/**
 * Stores the check key's record unless it is there already (a conditional
 * insert: nothing else is ever overwritten), and returns the authorizer
 * context it stands for: what the operations get when the new authorizer
 * could not give one (a key store failing for both versions).
 */
export async function ensureCheckKey(
  keys: Pick<ApiKeyRepository, 'insert'>,
  key: string,
  meteringKey: string,
  now: number,
): Promise<Record<string, string>> {
  const record = checkKeyRecord(key, meteringKey, now);
  await keys.insert(record);
  return toAuthorizerContext({
    keyId: record.keyId,
    customerId: record.keyId,
    plan: record.plan,
    limits: { ...deploymentCheckKey.limits },
  });
}
