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
  /**
   * How long in all to keep retrying a 409 request_in_progress (a create with
   * the same Idempotency-Key still in flight, e.g. one whose first attempt
   * timed out). These waits do not count against maxRetries: the API holds such
   * a key for at most its function timeout (10 s), so this outlasts it.
   */
  maxInProgressWaitMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 5,
  baseDelayMs: 200,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 120_000,
  maxInProgressWaitMs: 30_000,
};

/** What a request went through so far. */
export interface RetryState {
  /** Retries made so far, 409 in-progress ones excepted. */
  retries: number;
  /** Time waited so far on 409 in-progress answers. */
  inProgressWaitedMs: number;
}

/** Statuses worth retrying: the request was not carried out, or (with an Idempotency-Key) is safe to repeat. */
const RETRYABLE_STATUSES = new Set([409, 429, 500, 502, 503, 504]);

export type RetryDecision = { retry: false } | { retry: true; waitMs: number; reason: 'retry-after' | 'backoff' };

/**
 * What to do after a failed attempt with `status` (undefined for a network
 * error) and its Retry-After in seconds, given what the request went through.
 */
export function decideRetry(
  policy: RetryPolicy,
  state: RetryState,
  status: number | undefined,
  retryAfterSeconds: number | undefined,
  random: () => number,
): RetryDecision {
  if (status !== undefined && !RETRYABLE_STATUSES.has(status)) return { retry: false };
  const waitMs = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 : fullJitter(policy, state.retries, random);
  const reason = retryAfterSeconds !== undefined ? 'retry-after' : 'backoff';
  if (status === 409) {
    return state.inProgressWaitedMs + waitMs > policy.maxInProgressWaitMs ? { retry: false } : { retry: true, waitMs, reason };
  }
  if (state.retries >= policy.maxRetries) return { retry: false };
  if (retryAfterSeconds !== undefined && waitMs > policy.maxRetryAfterMs) return { retry: false };
  return { retry: true, waitMs, reason };
}

/** "Full jitter": a random wait between 0 and min(cap, base × 2^attempt). */
export function fullJitter(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}
