/**
 * The customer and its secrets (decision 16): the only door into
 * functions/customers/. Its types, the one function from a plan to limits
 * (limitsOf), and every command that writes a customer (CustomerTable: issue,
 * rotate, revoke, change plan, the deployment check's key) are here; nothing
 * outside this folder reads or writes the key table.
 */
export {
  API_KEY_PREFIX,
  type ApiKeyRecord,
  type Customer,
  type CustomerSecrets,
  callerOf,
  checkCustomer,
  displayPrefixOf,
  generateApiKey,
  hashApiKey,
  isUsable,
  isWellFormedApiKey,
  type KeyState,
  keyState,
  keyStates,
  limitsOf,
  type MeteredCustomer,
  meteringOf,
  ownerProblem,
  type Secret,
  type StoredKeyState,
} from './customer';
export { ApiKeyChangedError, CustomerTable, customerKey, itemsOf, joined, secretOf } from './customer-table';
