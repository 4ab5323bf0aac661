import type { PlanLimits } from '../../definitions/plans';
import type { RateLimitRepository } from '../data/rate-limit-repository';
import { BAN_DURATION_SECONDS, banThreshold, countedVerdict, refusedVerdict, type Verdict, windowsAt } from './rate-limit';

/**
 * Counts one request of a key and decides: serve it (with its headers) or
 * refuse it with 429. A refused request counts only toward the ban rule.
 */
export async function enforceRateLimit(
  keyId: string,
  limits: PlanLimits,
  counters: RateLimitRepository,
  nowMs: number,
): Promise<Verdict> {
  const windows = windowsAt(nowMs);
  const outcome = await counters.count(keyId, limits, windows, nowMs);
  if (outcome.kind === 'counted') return countedVerdict(limits, windows, outcome.minuteCount, outcome.dayCount);
  if (outcome.kind === 'suspended') return refusedVerdict('suspended', limits, windows, nowMs, outcome.until);

  const refusals = await counters.countRefusal(keyId, windows);
  if (refusals >= banThreshold(limits)) {
    const until = Math.floor(nowMs / 1000) + BAN_DURATION_SECONDS;
    await counters.suspend(keyId, windows, until);
    return refusedVerdict('suspended', limits, windows, nowMs, until);
  }
  return refusedVerdict(outcome.kind, limits, windows, nowMs);
}
