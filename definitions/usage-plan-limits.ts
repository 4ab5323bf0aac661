import type { PlanLimits } from './plans';

/** The throttle and quota of an API Gateway usage plan. */
export interface UsagePlanLimits {
  /** Steady-state requests per second (token refill rate). */
  rateLimit: number;
  /** Token bucket size: requests accepted at once. */
  burstLimit: number;
  /** Requests per day. */
  dailyQuota: number;
}

/**
 * The usage plan's limits for a plan of definitions/plans.ts: the CDK stack
 * sets them on the fixed plans' usage plans, and the key tool (admin/) on the
 * usage plan of each Enterprise key.
 *
 * Usage plans are the AWS-side backstop (flood protection and metering), not the
 * contract: our own atomic counters enforce the exact per-minute and per-day
 * limits and refuse first, with exact Retry-After and X-RateLimit-* headers. So
 * the usage plan must never refuse a request the contract allows:
 *
 * - burstLimit = 2 × perMinute: the contract counts fixed UTC minutes, so a
 *   client may send a whole minute's worth at the end of one minute and another
 *   at the start of the next — 2 × perMinute back to back. (A bucket of only
 *   perMinute would throttle that.) With this bucket, any refill of at least
 *   perMinute per minute accepts every contract-allowed sequence.
 * - rateLimit = ⌈2 × perMinute / 60⌉ per second: twice the refill that needs,
 *   so that the client's own refused retries (which API Gateway counts too,
 *   until our temporary ban stops them) do not drain the bucket.
 * - dailyQuota = 2 × perDay: API Gateway's quota day need not line up with our
 *   UTC day, and any of its days overlaps at most two of ours; the factor also
 *   covers requests we refuse, which API Gateway counts as well.
 */
export function usagePlanLimits(limits: PlanLimits): UsagePlanLimits {
  return {
    rateLimit: Math.ceil((2 * limits.perMinute) / 60),
    burstLimit: 2 * limits.perMinute,
    dailyQuota: 2 * limits.perDay,
  };
}
