import { type ErrorCode, errorCodes } from '../definitions/error-codes';
import { type GatewayResponseType, gatewayResponses } from '../definitions/gateway-responses';
import { operationContracts } from '../definitions/operations';
import type { OperationId } from '../definitions/routes';

/**
 * Who answers which status of an operation, and so which headers a client can
 * count on. Two parts of the stack answer: the operation's function (through
 * functions/http/api-handler.ts) and API Gateway itself (its gateway responses,
 * definitions/gateway-responses.ts). A header the functions add is `required`
 * in the document only for a status that the function alone sends.
 */

/** Whether the function's answers with a status carry the X-RateLimit-* headers. */
export type RateLimitHeaders = 'always' | 'sometimes' | 'never';

/**
 * Statuses each function answers with. Rate-limit headers are set once the
 * request is counted (functions/http/api-handler.ts, rateLimit middleware):
 * every answer after that has them, a 429 refusal too; a 401 (no caller), and a
 * 500 or 503 from the counter itself, come before.
 */
function functionAnswers(operationId: OperationId): Record<number, RateLimitHeaders> {
  const { success, errorStatuses } = operationContracts[operationId];
  return Object.fromEntries([success.status, ...errorStatuses].map((status) => [status, 'always' as const]));
}
const everyFunctionAnswers: Record<number, RateLimitHeaders> = { 401: 'never', 429: 'always', 500: 'sometimes', 503: 'sometimes' };

/** Statuses whose function answers carry Retry-After: 429 refusals, 409 in-flight duplicates, 503. */
const functionRetryAfterStatuses = new Set([409, 429, 503]);
/** Static headers of the function's error answers (functions/http/responses.ts). */
const functionStaticHeaders: Record<number, Record<string, string>> = { 401: { 'WWW-Authenticate': 'Bearer' } };

/**
 * The gateway responses a client can get on a route that exists, given how the
 * stack configures API Gateway (lib/petstore-stack.ts): a REQUEST authorizer
 * whose policy allows the whole API or, for a key banned for longer than its
 * cache TTL, denies it; apiKeyRequired for metering, usage plans, no request
 * validators, no IAM auth. The others (EXPIRED_TOKEN, INVALID_SIGNATURE, WAF_FILTERED, BAD_REQUEST_*,
 * UNSUPPORTED_MEDIA_TYPE, DEFAULT_4XX) have nothing to fire on here.
 */
export const gatewayAnswersOnOperations: readonly GatewayResponseType[] = [
  'UNAUTHORIZED', // no Authorization header, or the authorizer refused the key
  'ACCESS_DENIED', // the authorizer's cached Deny of a banned key: 429 key_suspended
  'INVALID_API_KEY', // the key's metering key is not (yet) in a usage plan
  'THROTTLED', // the stage throttle, or an Enterprise key's own usage plan: backstops behind our own limiter
  'QUOTA_EXCEEDED', // an Enterprise key's own usage plan's quota (pooled keys have none)
  'REQUEST_TOO_LARGE', // over API Gateway's own 10 MB payload limit
  'AUTHORIZER_FAILURE', // the authorizer could not read the key store
  'AUTHORIZER_CONFIGURATION_ERROR',
  'API_CONFIGURATION_ERROR',
  'INTEGRATION_FAILURE', // a function that Lambda refused to run (throttled) or that crashed: 503 service_unavailable
  'INTEGRATION_TIMEOUT',
  'DEFAULT_5XX',
];

/** API Gateway's answer to a path or method that is not in the route table, before any key check. */
export const gatewayAnswerToUnknownRoutes: GatewayResponseType = 'MISSING_AUTHENTICATION_TOKEN';

export function gatewayStatus(type: GatewayResponseType): number {
  return errorCodes[gatewayResponses[type].code].status;
}

export interface StatusSources {
  status: number;
  /** Undefined when the function never answers with this status. */
  functionRateLimitHeaders?: RateLimitHeaders;
  gateway: GatewayResponseType[];
  /** Error codes a body with this status can carry. */
  codes: ErrorCode[];
}

export interface HeaderPresence {
  /** The header can be in a response with this status. */
  documented: boolean;
  /** Every response with this status has it. */
  required: boolean;
}

/** Every status an operation can answer with, ascending, and who sends it. */
export function statusSourcesOf(operationId: OperationId): StatusSources[] {
  const fromFunction = { ...everyFunctionAnswers, ...functionAnswers(operationId) };
  const statuses = new Set([...Object.keys(fromFunction).map(Number), ...gatewayAnswersOnOperations.map(gatewayStatus)]);
  return [...statuses]
    .sort((a, b) => a - b)
    .map((status) => ({
      status,
      functionRateLimitHeaders: fromFunction[status],
      gateway: gatewayAnswersOnOperations.filter((type) => gatewayStatus(type) === status),
      codes: (Object.keys(errorCodes) as ErrorCode[]).filter((code) => errorCodes[code].status === status),
    }));
}

/** The X-RateLimit-* headers: only from the function, once it counted the request. */
export function rateLimitHeadersPresence(sources: StatusSources): HeaderPresence {
  const fromFunction = sources.functionRateLimitHeaders;
  return {
    documented: fromFunction === 'always' || fromFunction === 'sometimes',
    required: fromFunction === 'always' && sources.gateway.length === 0,
  };
}

/** Headers the function adds to every answer of an operation (deprecation headers). */
export function functionHeadersPresence(sources: StatusSources): HeaderPresence {
  return { documented: sources.functionRateLimitHeaders !== undefined, required: sources.gateway.length === 0 };
}

/** A header the function and the gateway each may or may not set for this status. */
export function headerPresence(sources: StatusSources, name: 'Retry-After' | 'WWW-Authenticate'): HeaderPresence {
  const setters: boolean[] = sources.gateway.map((type) => gatewayResponses[type].headers?.[name] !== undefined);
  if (sources.functionRateLimitHeaders !== undefined) {
    setters.push(
      name === 'Retry-After' ? functionRetryAfterStatuses.has(sources.status) : functionStaticHeaders[sources.status]?.[name] !== undefined,
    );
  }
  return { documented: setters.some(Boolean), required: setters.length > 0 && setters.every(Boolean) };
}
