import type { PlanLimits } from '../../definitions/plans';
import { ApiError } from './errors';
import {
  BAN_DURATION_SECONDS,
  banThreshold,
  type CountOutcome,
  countedVerdict,
  refusedVerdict,
  type Verdict,
  type Windows,
  windowsAt,
} from './rate-limit';

/**
 * The counter store the limiter needs (implemented in data/rate-limit-repository.ts).
 * Every write carries the id of the request it is for, so that a write the SDK
 * repeats after losing its answer is applied once.
 */
export interface RateCounters {
  /** Counts one request against both windows unless refused; `requestId` marks the write. */
  count(keyId: string, limits: PlanLimits, windows: Windows, nowMs: number, requestId: string): Promise<CountOutcome>;
  /** Counts one refused request of this minute (once per requestId) and returns the minute's refusals so far. */
  countRefusal(keyId: string, windows: Windows, requestId: string): Promise<number>;
  suspend(keyId: string, windows: Windows, until: number): Promise<void>;
  /**
   * Takes back the charge of `requestId` if it is the last request counted on
   * the key's item (so also when it is unknown whether the count landed).
   * Returns whether it did.
   */
  refund(keyId: string, windows: Windows, requestId: string): Promise<boolean>;
}

export interface RateLimitDecision extends Verdict {
  /** Takes back this request's charge: for a request answered 503 (docs/clients.md, "Counting: each request once"). */
  refund(): Promise<boolean>;
}

/**
 * Counts one request of a key and decides: serve it (with its headers) or
 * refuse it with 429, or with 401 when the key was revoked or expired since
 * the authorizer's answer was cached. A refused request counts only toward
 * the ban rule.
 */
export async function enforceRateLimit(
  keyId: string,
  limits: PlanLimits,
  counters: RateCounters,
  nowMs: number,
  requestId: string,
): Promise<RateLimitDecision> {
  const windows = windowsAt(nowMs);
  const refund = () => counters.refund(keyId, windows, requestId);
  let outcome: CountOutcome;
  try {
    outcome = await counters.count(keyId, limits, windows, nowMs, requestId);
  } catch (error) {
    // Whether the count landed is unknown: take it back if it did.
    await refund().catch(() => false);
    throw error;
  }
  return { ...(await verdictFor(outcome, keyId, counters, windows, nowMs, requestId)), refund };
}

async function verdictFor(
  outcome: CountOutcome,
  keyId: string,
  counters: RateCounters,
  windows: Windows,
  nowMs: number,
  requestId: string,
): Promise<Verdict> {
  const { limits } = outcome;
  if (outcome.kind === 'key_unusable') throw new ApiError('unauthorized', 'This API key was revoked or has expired.');
  if (outcome.kind === 'counted') return countedVerdict(limits, windows, outcome.minuteCount, outcome.dayCount);
  if (outcome.kind === 'suspended') return refusedVerdict('suspended', limits, windows, nowMs, outcome.until);

  const refusals = await counters.countRefusal(keyId, windows, requestId);
  if (refusals >= banThreshold(limits)) {
    const until = Math.floor(nowMs / 1000) + BAN_DURATION_SECONDS;
    await counters.suspend(keyId, windows, until);
    return refusedVerdict('suspended', limits, windows, nowMs, until);
  }
  return refusedVerdict(outcome.kind, limits, windows, nowMs);
}
