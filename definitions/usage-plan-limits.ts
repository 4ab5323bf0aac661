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

/**
 * How many customers one pooled metering key (functions/domain/metering.ts)
 * must carry when `customers` keys of a plan spread over `keysPerPlan` pooled
 * keys by a uniform hash: the smallest k such that the chance that any pooled
 * key gets more than k customers is at most `risk` (a union bound over the
 * pooled keys of the binomial tail). A usage plan sized for k customers then
 * never refuses what the contract allows them, whichever keys they hold.
 */
export function customersPerPooledKey(customers: number, keysPerPlan: number, risk = 1e-6): number {
  if (customers <= 0) return 1;
  if (keysPerPlan <= 1) return customers;
  const p = 1 / keysPerPlan;
  // P(X = j) for X ~ Binomial(customers, p), iterated in log space.
  let logPmf = customers * Math.log1p(-p);
  let below = 0;
  for (let k = 0; k < customers; k++) {
    below += Math.exp(logPmf);
    if (keysPerPlan * Math.max(0, 1 - below) <= risk) return Math.max(1, k);
    logPmf += Math.log(customers - k) - Math.log(k + 1) + Math.log(p) - Math.log1p(-p);
  }
  return customers;
}

/** A pooled key's usage plan: the plan's per-customer limits times the customers it carries. */
export function pooledUsagePlanLimits(limits: PlanLimits, customersPerKey: number): UsagePlanLimits {
  const one = usagePlanLimits(limits);
  return {
    rateLimit: one.rateLimit * customersPerKey,
    burstLimit: one.burstLimit * customersPerKey,
    dailyQuota: one.dailyQuota * customersPerKey,
  };
}
