import type { PlanLimits } from './plans';

/** The throttle and quota of an API Gateway usage plan. */
export interface UsagePlanLimits {
  /** Steady-state requests per second (token refill rate). */
  rateLimit: number;
  /** Token bucket size: requests accepted at once. */
  burstLimit: number;
}

/**
 * The usage plan of one customer: an Enterprise key's own (the key tool, admin/,
 * sets it), and the per-customer share the stage throttle sums
 * (lib/stage-config.ts, stageThrottleFor). Only that customer's requests spend
 * it. The fixed plans' pooled metering keys carry none of these limits
 * (pooledUsagePlan below).
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
 * - no quota: a quota is spent by every request the plan meters, and AWS does
 *   not say whether the requests its throttle or our own 429s refuse count
 *   (the local gateway counts them: the stricter side), so a client looping on
 *   refused requests, or flooding until it is banned, could spend any finite
 *   quota before its contract's day is used up, and the usage plan would then
 *   refuse what the contract allows. A throttle cannot be spent that way: its
 *   bucket refills within a minute (burstLimit ÷ rateLimit = 60 s), so by the
 *   end of a ban (15 minutes) it is full again. Our counters enforce the day.
 */
export function usagePlanLimits(limits: PlanLimits): UsagePlanLimits {
  return {
    rateLimit: Math.ceil((2 * limits.perMinute) / 60),
    burstLimit: 2 * limits.perMinute,
  };
}

/**
 * How many customers one pooled metering key (functions/domain/metering.ts)
 * must carry when `customers` keys of a plan spread over `keysPerPlan` pooled
 * keys by a uniform hash: the smallest k such that the chance that any pooled
 * key gets more than k customers is at most `risk` (a union bound over the
 * pooled keys of the binomial tail). The pooled keys' usage plans limit
 * nothing (pooledUsagePlan), so this sizes nothing: it says how many customers
 * one pooled key's usage report (GetUsage) may mix, as the stack's usage-plan
 * descriptions state it.
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

/**
 * The usage plan of a pooled metering key (functions/domain/metering.ts): no
 * throttle and no quota, metering only. A usage plan throttles and meters per
 * API key ("Throttle requests to your REST APIs for better throughput in API
 * Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html),
 * and a pooled key is one API key for every customer hashed onto it: any
 * throttle or quota on it is one bucket that one customer's flood (or a client
 * retrying refused requests all day) would empty for all of them, so it could
 * refuse what the contract allows the others. Both are optional in a usage plan
 * ("create-usage-plan", https://docs.aws.amazon.com/cli/latest/reference/apigateway/create-usage-plan.html).
 * What holds a flooding customer back instead, each spent by that customer
 * alone or by no one (SCALING.md, "One customer's flood"): our own counters and
 * ban, the authorizer's cached Deny for a banned key, and WAF's per-key rate
 * rule at the edge; the stage throttle and the authorizer's reserved
 * concurrency protect the stage as a whole.
 */
export const pooledUsagePlan: UsagePlanSettings = {};

/** A usage plan's limits as API Gateway takes them: each one optional. */
export interface UsagePlanSettings {
  throttle?: { rateLimit: number; burstLimit: number };
  /** Requests per day. */
  quota?: { limit: number };
}

/** One customer's usage plan (usagePlanLimits) as settings: a throttle, no quota. */
export function customerUsagePlan(limits: PlanLimits): UsagePlanSettings {
  return { throttle: usagePlanLimits(limits) };
}

/**
 * The usage plan that refuses nothing either of two refuses: the larger
 * throttle and quota of each, none where either has none. A customer's usage
 * plan holds it while the customer's record changes from the limits of one to
 * those of the other (admin/targets/aws.ts and local/usage-plans.ts), so no
 * request the old or the new limits allow is refused in between: a raise is
 * made before the record's write, a lowering after it.
 */
export function widerUsagePlan(a: UsagePlanSettings, b: UsagePlanSettings): UsagePlanSettings {
  return {
    ...(a.throttle && b.throttle
      ? {
          throttle: {
            rateLimit: Math.max(a.throttle.rateLimit, b.throttle.rateLimit),
            burstLimit: Math.max(a.throttle.burstLimit, b.throttle.burstLimit),
          },
        }
      : {}),
    ...(a.quota && b.quota ? { quota: { limit: Math.max(a.quota.limit, b.quota.limit) } } : {}),
  };
}

export function sameUsagePlan(a: UsagePlanSettings, b: UsagePlanSettings): boolean {
  return (
    a.throttle?.rateLimit === b.throttle?.rateLimit &&
    a.throttle?.burstLimit === b.throttle?.burstLimit &&
    a.quota?.limit === b.quota?.limit
  );
}
