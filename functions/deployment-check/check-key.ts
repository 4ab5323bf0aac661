import { randomBytes } from 'node:crypto';
import { deploymentCheckKey, deploymentCheckKeyId } from '../../definitions/deployment-check';
import { limitsFor } from '../../definitions/plans';
import { ApiKeyChangedError, ApiKeyRepository, customerItem } from '../data/api-key-repository';
import { API_KEY_PREFIX, type Customer, displayPrefixOf, hashApiKey, isUsable, isWellFormedApiKey, type Secret } from '../domain/api-keys';
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

/** The check's customer and the secret it uses (a customer has one until a secret is re-created). */
export interface CheckCustomer {
  customer: Customer;
  secret: Secret;
}

/**
 * The check's customer, an Enterprise customer of its own metered by its own
 * API Gateway key, with the key as its first secret (named, like any first
 * secret, by the customer's id).
 */
export function checkCustomer(key: string, meteringKey: string, now: number): CheckCustomer {
  const timestamp = new Date(now).toISOString();
  const keyHash = hashApiKey(key);
  const keyId = deploymentCheckKeyId(keyHash);
  return {
    customer: {
      customerId: keyId,
      plan: 'enterprise',
      owner: deploymentCheckKey.owner,
      customLimits: { ...deploymentCheckKey.limits },
      meteringKey,
      createdAt: timestamp,
      customerUpdatedAt: timestamp,
    },
    secret: {
      keyHash,
      keyId,
      customerId: keyId,
      displayPrefix: displayPrefixOf(key),
      status: 'active',
      createdAt: timestamp,
      updatedAt: timestamp,
    },
  };
}

/**
 * Makes sure the check key works, and returns the authorizer context it
 * stands for: what the operations get when the new authorizer could not give
 * one (a key store failing for both versions). The key is an ordinary record
 * to the authorizer, so a revocation by hand (or by an older key tool) would
 * otherwise make every later check fail with 401 and roll back every deployment.
 */
export async function ensureCheckKey(keys: CheckKeyTable, key: string, meteringKey: string, now: number): Promise<Record<string, string>> {
  const { customer, secret } = await keys.ensure(checkCustomer(key, meteringKey, now), now);
  return toAuthorizerContext({
    keyId: secret.keyId,
    customerId: customer.customerId,
    plan: customer.plan,
    limits: limitsFor(customer.plan, customer.customLimits),
  });
}

/** Tries of an ensure: another hook of the same deployment may re-create the key at the same moment. */
const ENSURE_TRIES = 3;

/**
 * The check's own key items, written with conditional puts only (the check
 * may only put: definitions/deployment-check.ts): a refused put returns the
 * item in its way, so nothing needs reading.
 */
export class CheckKeyTable extends ApiKeyRepository {
  /**
   * Inserts the check's customer and its secret where absent. A stored secret
   * that no longer works (revoked or expired), or a secret or customer item
   * gone, is re-created: the secret under an id of its own
   * (deploymentCheckKeyId), of the same customer (its counters, its metering
   * key); a customer item gone is put back as the check has it.
   * Returns the customer as stored and the secret that works.
   */
  async ensure(fresh: CheckCustomer, now: number): Promise<CheckCustomer> {
    for (let tryIndex = 0; tryIndex < ENSURE_TRIES; tryIndex++) {
      const found = await this.putWhereAbsent({ customer: customerItem(fresh.customer), secret: fresh.secret });
      if (!found) return fresh;
      if (found.secret && found.customer && isUsable(found.secret, now)) return { customer: found.customer, secret: found.secret };
      const secret: Secret = { ...fresh.secret, keyId: deploymentCheckKeyId(fresh.secret.keyHash, randomBytes(4).toString('hex')) };
      const customer = found.customer ?? fresh.customer;
      const replaced = await this.putWhereAbsent(
        { ...(found.customer ? {} : { customer: customerItem(customer) }), secret },
        found.secret?.keyId,
      );
      if (!replaced) return { customer, secret };
    }
    throw new ApiKeyChangedError(fresh.secret.keyId);
  }
}
