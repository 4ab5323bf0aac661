import type { APIGatewayProxyResult } from 'aws-lambda';
import { errorBody, errorCodes } from '../../definitions/error-codes';
import { ApiError, type DependencyFailureOutcome, DependencyUnavailableError } from '../domain/errors';
import { logger } from '../runtime/logger';

/** Seconds a client should wait after a 503 before retrying. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** What a 503 tells the client about its request: never "nothing was changed" when that is not known. */
const serviceUnavailableMessages: Record<DependencyFailureOutcome, string> = {
  unchanged: 'The service is temporarily unavailable; nothing was changed. Retry after the number of seconds in Retry-After.',
  change_unknown:
    'The service is temporarily unavailable, and it is unknown whether the request took effect. Retry after the number of seconds in Retry-After; a request sent with an Idempotency-Key takes effect at most once.',
  create_unknown:
    'The service is temporarily unavailable, and it is unknown whether the pet was created. Retry after the number of seconds in Retry-After with an Idempotency-Key header: requests with the same Idempotency-Key create at most one pet.',
  create_unknown_with_key:
    'The service is temporarily unavailable, and the pet may have been created. Retrying with the same Idempotency-Key and body after the number of seconds in Retry-After is safe: it returns that pet, or creates it once.',
};

/** What a 500 may say about the request: it claims nothing was changed only when no write was sent. */
export type UnexpectedErrorOutcome = 'unchanged' | 'change_unknown';

const unexpectedErrorMessages: Record<UnexpectedErrorOutcome, string> = {
  unchanged: 'An unexpected error occurred; nothing was changed.',
  change_unknown:
    'An unexpected error occurred, and it is unknown whether the request took effect. A request sent with an Idempotency-Key takes effect at most once: retry it with the same key and body.',
};

const baseHeaders = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...baseHeaders, ...headers }, body: JSON.stringify(body) };
}

/**
 * The one place where an error becomes an HTTP response: ApiError by its code,
 * a dependency failure as 503, anything else as 500 without internals, saying
 * what is known (`outcome`: whether a write may have been sent before it).
 */
export function errorResponse(error: unknown, outcome: UnexpectedErrorOutcome = 'change_unknown'): APIGatewayProxyResult {
  if (error instanceof ApiError) {
    const headers: Record<string, string> = {};
    if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
    if (error.code === 'unauthorized') headers['WWW-Authenticate'] = 'Bearer';
    return jsonResponse(errorCodes[error.code].status, errorBody(error.code, error.message), headers);
  }
  if (error instanceof DependencyUnavailableError) {
    logger.warn('dependency unavailable', { error: error.cause instanceof Error ? error.cause : String(error.cause) });
    return jsonResponse(503, errorBody('service_unavailable', serviceUnavailableMessages[error.outcome]), {
      'Retry-After': String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS),
    });
  }
  logger.error('unexpected error', { error: error instanceof Error ? error : String(error) });
  return jsonResponse(500, errorBody('internal_error', unexpectedErrorMessages[outcome]));
}
