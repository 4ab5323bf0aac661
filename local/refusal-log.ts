import { CustomerTable, hashApiKey, isWellFormedApiKey, keyState } from '../functions/customers';
import { bearerToken } from '../functions/http/bearer-token';
import type { Dependencies } from '../functions/runtime/dependencies';

/**
 * `npm start`'s operator log: one JSON line per refused request (status 400
 * and up), with the access log's fields on AWS (definitions/observability.ts,
 * accessLogFields: requestId, ip, httpMethod, resourcePath, status,
 * principalId, errorType) and two more that only the local gateway can give:
 * the Error object's `code`, and `reason`, why it was refused. Never the
 * secret nor any part of it: a key is named by its key id (principalId), once
 * the authorizer found it.
 */
export interface Refusal {
  requestId: string;
  ip: string;
  httpMethod: string;
  resourcePath: string;
  status: number;
  /** The key id the authorizer named, when it found the key. */
  principalId?: string;
  /** The gateway response's type, when the gateway answered instead of a function (the access log's errorType). */
  errorType?: string;
  code: string;
  reason: string;
}

/** The line npm start prints for a refusal. */
export function refusalLine(refusal: Refusal): string {
  return JSON.stringify({ message: 'refused', ...refusal });
}

/**
 * Why the authorizer answered "Unauthorized" to an Authorization value, or a
 * function 401 to a key whose Allow the gateway had cached (the limiter learnt
 * of the revocation at the key's next request): neither says more than that
 * (API Gateway's UNAUTHORIZED, the function's Error object), so npm start asks
 * the key store itself, by the token's hash as the authorizer does, and tells
 * the states apart with the domain's own rule (keyState). On AWS the access log
 * says UNAUTHORIZED only; `petstore-keys show <key id>` tells a revoked key
 * from an expired one (docs/operators.md).
 */
export function unauthorizedReason(dependencies: Pick<Dependencies, 'db' | 'tableNames' | 'clock'>) {
  const keys = new CustomerTable(dependencies.db, dependencies.tableNames);
  return async (authorization: string): Promise<Pick<Refusal, 'reason' | 'principalId'>> => {
    const token = bearerToken(authorization);
    if (token === undefined) return { reason: 'malformed_authorization_header' };
    if (!isWellFormedApiKey(token)) return { reason: 'malformed_key' };
    const secret = await keys.findSecret(hashApiKey(token)).catch(() => undefined);
    if (!secret) return { reason: 'unknown_key' };
    const state = keyState(secret, dependencies.clock());
    // revoked, or expired (a rotated key past its grace); active here means its customer record is missing.
    return { reason: state === 'active' ? 'unknown_customer' : state, principalId: secret.keyId };
  };
}
