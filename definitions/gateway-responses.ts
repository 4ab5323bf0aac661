import { type ErrorCode, errorBody, errorCodes } from './error-codes';
import { authorizer } from './routes';

/**
 * What API Gateway answers by itself (before or instead of our Lambda code),
 * as Error objects. The CDK stack configures these as gateway responses and the
 * local gateway answers with the very same status, headers and body.
 *
 * A gateway response has one fixed status per type, and its headers come from
 * the request or are literals: nothing here can carry per-request values such
 * as X-RateLimit-Remaining or a ban's own Retry-After (docs/api-gateway-behaviour.md).
 */
export type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'RESOURCE_NOT_FOUND'
  | 'INVALID_API_KEY'
  | 'EXPIRED_TOKEN'
  | 'INVALID_SIGNATURE'
  | 'WAF_FILTERED'
  | 'BAD_REQUEST_BODY'
  | 'BAD_REQUEST_PARAMETERS'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'API_CONFIGURATION_ERROR'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseDefinition {
  code: ErrorCode;
  message: string;
  /** Static response headers (API Gateway allows nothing else). */
  headers?: Record<string, string>;
}

/** Seconds a client should wait after a gateway-level 429 or 503 (static by necessity). */
const GATEWAY_RETRY_AFTER_SECONDS = '5';

/**
 * A 503 after which the request may have taken effect (the function ran, or
 * may still run, and may have written): it never says nothing was changed.
 */
const OUTCOME_UNKNOWN_MESSAGE =
  'The service is temporarily unavailable, and it is unknown whether the request took effect. Retry after the number of seconds in Retry-After; a request sent with an Idempotency-Key takes effect at most once.';

export const gatewayResponses: Record<GatewayResponseType, GatewayResponseDefinition> = {
  // Missing Authorization header (API Gateway answers without calling the
  // authorizer) or the authorizer refused the key.
  UNAUTHORIZED: {
    code: 'unauthorized',
    message: 'Missing or invalid API key. Send it as "Authorization: Bearer <API_KEY>".',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  INVALID_API_KEY: {
    code: 'unauthorized',
    message: 'Missing or invalid API key. Send it as "Authorization: Bearer <API_KEY>".',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  // The authorizer's Deny: only for a key whose customer is banned for longer
  // than the authorizer's cache TTL (functions/rate-limit/bans.ts). API
  // Gateway caches the Deny for that TTL, so a retry within it is refused
  // again: Retry-After is the TTL, never past the ban's end by more than one
  // TTL, and the next answer after it comes from the authorizer (a Deny again)
  // or, for the ban's last minutes, from the operation with the exact seconds.
  ACCESS_DENIED: {
    code: 'key_suspended',
    message: 'This API key is suspended because it kept calling after 429 responses. Retry after the number of seconds in Retry-After.',
    headers: { 'Retry-After': String(authorizer.resultsCacheTtlSeconds) },
  },
  EXPIRED_TOKEN: { code: 'forbidden', message: 'This request is not allowed.' },
  INVALID_SIGNATURE: { code: 'forbidden', message: 'This request is not allowed.' },
  WAF_FILTERED: { code: 'forbidden', message: 'This request was blocked.' },
  // API Gateway's answer to an unknown path or method: a plain 404 here.
  MISSING_AUTHENTICATION_TOKEN: { code: 'not_found', message: 'No such route. See the API reference for the operations under /v1.' },
  RESOURCE_NOT_FOUND: { code: 'not_found', message: 'No such route. See the API reference for the operations under /v1.' },
  BAD_REQUEST_BODY: { code: 'invalid_request', message: 'The request body is invalid.' },
  BAD_REQUEST_PARAMETERS: { code: 'invalid_request', message: 'The request parameters are invalid.' },
  REQUEST_TOO_LARGE: { code: 'payload_too_large', message: 'The request is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { code: 'unsupported_media_type', message: 'The request body must be application/json.' },
  // The stage throttle, and an Enterprise key's own usage plan (pooled keys'
  // usage plans limit nothing): backstops behind our own limiter, which answers
  // first with exact headers. These fire only if it was bypassed.
  THROTTLED: {
    code: 'rate_limited',
    message: 'Too many requests. Retry after the number of seconds in Retry-After.',
    headers: { 'Retry-After': GATEWAY_RETRY_AFTER_SECONDS },
  },
  QUOTA_EXCEEDED: {
    code: 'quota_exceeded',
    message: 'The request quota of this API key is used up. Retry after the number of seconds in Retry-After.',
    headers: { 'Retry-After': '3600' },
  },
  // The key could not be checked. Our authorizer refuses keys only with
  // "Unauthorized" (401), so any other failure means the key store failed.
  // AWS documents AUTHORIZER_CONFIGURATION_ERROR as "failing to connect to a
  // custom ... authorizer" and AUTHORIZER_FAILURE as the authorizer having
  // "failed to authenticate the caller", both 500 by default; an authorizer
  // that throws gives the former. Which one a given failure gives is not
  // spelled out, so both answer 503 with Retry-After.
  // "Gateway response types for API Gateway",
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html
  AUTHORIZER_FAILURE: {
    code: 'service_unavailable',
    message: 'The service is temporarily unavailable. Retry after the number of seconds in Retry-After.',
    headers: { 'Retry-After': GATEWAY_RETRY_AFTER_SECONDS },
  },
  AUTHORIZER_CONFIGURATION_ERROR: {
    code: 'service_unavailable',
    message: 'The service is temporarily unavailable. Retry after the number of seconds in Retry-After.',
    headers: { 'Retry-After': GATEWAY_RETRY_AFTER_SECONDS },
  },
  // The function could not be run or did not answer: Lambda refused the
  // invocation, or the function failed. AWS: "API Gateway treats all
  // invocation and function errors as internal errors" (500 when "the Lambda
  // API rejects the invocation request", 502 when "the function runs but
  // returns an error"; "Handling Lambda errors with an API Gateway API",
  // https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html).
  // The gateway response types page lists INTEGRATION_FAILURE as "the gateway
  // response for an integration failed error"
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html),
  // and what reaches it: a Lambda throttle ("Lambda 429 now maps to the
  // INTEGRATION_FAILURE API Gateway response", Stack Overflow question 36363280;
  // AWS re:Post, "API Gateway proxy integration does not forward Lambda
  // throttling (HTTP 429) to client"), a function error and an answer over
  // Lambda's payload limit (access logs name INTEGRATION_FAILURE with "Lambda
  // Customer Function Error": DataBiosphere/azul#6624, https://github.com/DataBiosphere/azul/pull/6624;
  // DataBiosphere/azul#8258). Our handlers answer every failure of their own
  // code themselves (a bug is their 500, a dependency's failure their 503), so
  // what is left is mostly the account's concurrency used up, timeouts,
  // out-of-memory and init failures: waiting is the cure, so 503 with
  // Retry-After (a static header value: "The parameter values can take any
  // incoming request parameter value or a static custom value",
  // "x-amazon-apigateway-gateway-responses.gatewayResponse object",
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.gatewayResponse.html).
  // A function that failed after a write may have written: the message never
  // says nothing was changed. A crashing new version still rolls back on
  // Lambda's Errors (lib/constructs/function-rollout.ts, crashAlarm).
  INTEGRATION_FAILURE: {
    code: 'service_unavailable',
    message: OUTCOME_UNKNOWN_MESSAGE,
    headers: { 'Retry-After': GATEWAY_RETRY_AFTER_SECONDS },
  },
  // API Gateway stopped waiting for the function (29 s), which may still be
  // running and may write after it: a POST may have created its pet, as after
  // our own 503 for a late write. The same words as INTEGRATION_FAILURE.
  INTEGRATION_TIMEOUT: {
    code: 'service_unavailable',
    message: OUTCOME_UNKNOWN_MESSAGE,
    headers: { 'Retry-After': GATEWAY_RETRY_AFTER_SECONDS },
  },
  API_CONFIGURATION_ERROR: { code: 'internal_error', message: 'An unexpected error occurred.' },
  // Catch-alls: their status is forced so that the body's status always matches.
  // A crashed or throttled function is INTEGRATION_FAILURE above, not DEFAULT_5XX.
  DEFAULT_4XX: { code: 'invalid_request', message: 'The request is invalid.' },
  DEFAULT_5XX: { code: 'internal_error', message: 'An unexpected error occurred.' },
};

/** The response API Gateway sends for a type: status, headers, JSON body. */
export function gatewayResponse(type: GatewayResponseType): {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
} {
  const definition = gatewayResponses[type];
  return {
    statusCode: errorCodes[definition.code].status,
    headers: { 'Content-Type': 'application/json', ...definition.headers },
    body: JSON.stringify(errorBody(definition.code, definition.message)),
  };
}
