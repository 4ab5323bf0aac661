import { API_KEY_PREFIX, type CustomerTable, callerOf, checkCustomer, isWellFormedApiKey } from '../customers';
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

/**
 * Makes sure the check key works (its customer's command, CustomerTable's
 * ensureCheckCustomer), and returns the authorizer context it stands for: what
 * the operations get when the new authorizer could not give one (a key store
 * failing for both versions). The key is an ordinary record to the authorizer,
 * so a revocation by hand would otherwise make every later check fail with 401
 * and roll back every deployment.
 */
export async function ensureCheckKey(
  customers: CustomerTable,
  key: string,
  meteringKey: string,
  now: number,
): Promise<Record<string, string>> {
  const record = await customers.ensureCheckCustomer(checkCustomer(key, meteringKey, now), now);
  return toAuthorizerContext(callerOf(record, record));
}
