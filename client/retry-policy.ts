/**
 * When to retry and how long to wait, as the API asks (its README and OpenAPI
 * document): on 429, and on 503 or 409 when they say so, wait Retry-After
 * seconds — never less; for other transient failures (503 without Retry-After,
 * 500, network errors) back off exponentially with full jitter, capped.
 */
export interface RetryPolicy {
  /** Retries after the first attempt, for any reason, before giving up. */
  maxRetries: number;
  /** Backoff base: the first retry waits at most this long. */
  baseDelayMs: number;
  /** Backoff cap: no backoff wait exceeds this. */
  maxDelayMs: number;
  /**
   * The longest Retry-After worth waiting for. A longer one (a used-up daily
   * quota, a suspended key) is given back to the caller at once as the error.
   */
  maxRetryAfterMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 5,
  baseDelayMs: 200,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 120_000,
};

/** Statuses worth retrying: the request was not carried out, or (with an Idempotency-Key) is safe to repeat. */
const RETRYABLE_STATUSES = new Set([409, 429, 500, 502, 503, 504]);

export type RetryDecision =
  | { retry: false }
  | { retry: true; waitMs: number; reason: 'retry-after' | 'backoff' };

/**
 * What to do after attempt number `attempt` (0 for the first) failed with
 * `status` (undefined for a network error), given its Retry-After in seconds.
 */
export function decideRetry(
  policy: RetryPolicy,
  attempt: number,
  status: number | undefined,
  retryAfterSeconds: number | undefined,
  random: () => number,
): RetryDecision {
  if (attempt >= policy.maxRetries) return { retry: false };
  if (status !== undefined && !RETRYABLE_STATUSES.has(status)) return { retry: false };
  if (retryAfterSeconds !== undefined) {
    const waitMs = retryAfterSeconds * 1000;
    return waitMs > policy.maxRetryAfterMs ? { retry: false } : { retry: true, waitMs, reason: 'retry-after' };
  }
  return { retry: true, waitMs: fullJitter(policy, attempt, random), reason: 'backoff' };
}

/** "Full jitter": a random wait between 0 and min(cap, base × 2^attempt). */
export function fullJitter(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}
