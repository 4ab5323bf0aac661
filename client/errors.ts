import type { ErrorObject } from './types.ts';

/**
 * An error answer of the API: its status, the Error object it carried
 * (`{ code, message, status }`, `code` from the closed set of the document) and
 * its headers (e.g. Retry-After, X-RateLimit-*).
 */
export class PetStoreError extends Error {
  constructor(
    readonly status: number,
    readonly error: ErrorObject,
    readonly headers: Headers,
  ) {
    super(`${status} ${error.code}: ${error.message}`);
    this.name = 'PetStoreError';
  }

  get code(): ErrorObject['code'] {
    return this.error.code;
  }

  /** Seconds the API asked to wait before the next request, when it said so. */
  get retryAfterSeconds(): number | undefined {
    return parseRetryAfterSeconds(this.headers.get('retry-after'));
  }
}

/**
 * A response that is not what the API sends: an error without an Error object,
 * or a success whose body is not JSON (e.g. an answer from a proxy in between).
 */
export class UnexpectedResponseError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly body: string,
  ) {
    super(`Unexpected response ${status}: ${body.slice(0, 200)}`);
    this.name = 'UnexpectedResponseError';
  }
}

/** Retry-After as delay-seconds (what the API sends) or an HTTP-date (RFC 9110). */
export function parseRetryAfterSeconds(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

export function isErrorObject(body: unknown): body is ErrorObject {
  if (!body || typeof body !== 'object') return false;
  const candidate = body as Record<string, unknown>;
  return typeof candidate.code === 'string' && typeof candidate.message === 'string' && typeof candidate.status === 'number';
}
