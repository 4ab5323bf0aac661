import type { ErrorCode } from '../../definitions/error-codes';

/**
 * An error the client is meant to see: a code from the error-code table and a
 * message written for the client. The HTTP edge maps it to a response; nothing
 * else decides status codes.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds the client should wait before retrying (429, 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * A dependency (DynamoDB) failed, timed out or throttled us. Answered as 503
 * with Retry-After; the cause is logged, never sent. `outcome` says what the
 * client may assume: nothing changed (the default), or a create whose write
 * may have landed (the answer to it was lost).
 */
export class DependencyUnavailableError extends Error {
  constructor(
    cause: unknown,
    readonly outcome: DependencyFailureOutcome = 'unchanged',
  ) {
    super('A dependency is unavailable', { cause });
    this.name = 'DependencyUnavailableError';
  }
}

export type DependencyFailureOutcome = 'unchanged' | 'change_unknown' | 'create_unknown' | 'create_unknown_with_key';
