import { type PlanLimits, type PlanName, plans } from '../../../definitions/plans';
import { stages } from '../../../lib/stage-config';
import { assumptions, rps } from '../../../scripts/capacity-model';
import { enterpriseCustomersAtBaseline } from '../../../scripts/quota-model';

/**
 * The scale mode's traffic (test/support/limiter-scale/scale-run.ts): the
 * customers of SCALING.md's 1× (production's plan mix and its Enterprise
 * customers), 1,000 requests a second in all, skewed: a customer's share
 * follows a Zipf law over a seeded random ranking (larger plans more likely
 * ahead), capped a little above its
 * per-minute limit, so a few customers are hot (at their limit, some of their
 * requests refused) and most are cold. At m× there are m times as many
 * customers like them; the run simulates one 1× population of them (a sample
 * of 1 in m) over the environments the whole load keeps warm.
 */
export type Operation = 'createPet' | 'listPets' | 'getPet';

export interface ScaleCustomer {
  customerId: string;
  keyId: string;
  plan: PlanName;
  limits: PlanLimits;
  /** Requests a second it sends, whatever the answers. */
  perSecond: number;
}

/** Enterprise limits are per contract (definitions/plans.ts): the run assumes this one for each. */
export const assumedEnterpriseLimits: PlanLimits = { perMinute: 10_000, perDay: 5_000_000 };
/** Zipf exponent of the customers' shares of the traffic. */
export const ZIPF_EXPONENT = 1.5;
/** A hot customer sends up to this many times its per-minute limit (the rest is refused, not banned: well below the ban rule). */
export const HOT_OVERSHOOT = 1.1;

/** The mix of DESIGN.md: 10 % creates, 60 % lists, 30 % gets; the limiter runs once per request whatever the operation. */
export const operationShares: Record<Operation, number> = {
  createPet: assumptions.mix.createPet,
  listPets: assumptions.mix.listAll + assumptions.mix.listByStatus,
  getPet: assumptions.mix.getPet,
};

function limitsOf(plan: PlanName): PlanLimits {
  const limits = plans[plan].limits;
  return limits === 'custom' ? assumedEnterpriseLimits : limits;
}

/** The 1× customers with their rates, ranked at random by `random`, 1,000 requests a second in all. */
export function scaleCustomers(random: () => number): ScaleCustomer[] {
  const counts: [PlanName, number][] = [...Object.entries(stages.production.customers), ['enterprise', enterpriseCustomersAtBaseline]] as [
    PlanName,
    number,
  ][];
  // A ranking at random, larger plans more likely ahead (weighted sampling: draw^(1 / weight), largest first).
  const drafted = counts.flatMap(([plan, count]) =>
    Array.from({ length: count }, (_, index) => ({ plan, index, order: random() ** (1 / limitsOf(plan).perMinute) })),
  );
  drafted.sort((a, b) => b.order - a.order);
  const caps = drafted.map(({ plan }) => (HOT_OVERSHOOT * limitsOf(plan).perMinute) / 60);
  const weights = drafted.map((_, rank) => 1 / (rank + 1) ** ZIPF_EXPONENT);
  const scale = scaleToTotal(weights, caps, rps(1));
  return drafted.map(({ plan, index }, rank) => ({
    customerId: `cus_${plan}_${index}`,
    keyId: `key_${plan}_${index}`,
    plan,
    limits: limitsOf(plan),
    perSecond: Math.min(caps[rank]!, scale * weights[rank]!),
  }));
}

/** The λ with Σ min(cap, λ·weight) = total (bisection: the sum grows with λ). */
function scaleToTotal(weights: number[], caps: number[], total: number): number {
  const sum = (scale: number) => weights.reduce((acc, weight, index) => acc + Math.min(caps[index]!, scale * weight), 0);
  if (sum(1e12) < total) throw new Error(`the customers' limits allow less than ${total} requests a second`);
  let low = 0;
  let high = 1e12;
  for (let step = 0; step < 200; step++) {
    const middle = (low + high) / 2;
    if (sum(middle) < total) low = middle;
    else high = middle;
  }
  return high;
}

/** Whether a customer sends at its limit or above: a hot one. */
export const isHot = (customer: ScaleCustomer) => customer.perSecond * 60 >= customer.limits.perMinute;

export interface Arrival {
  atMs: number;
  customer: ScaleCustomer;
  operation: Operation;
  durationMs: number;
}

/** The requests of all customers, one after another in time: Poisson arrivals per customer, merged. */
export function* arrivals(customers: ScaleCustomer[], random: () => number, fromMs: number, untilMs: number): Generator<Arrival> {
  const cumulative: number[] = [];
  let total = 0;
  for (const customer of customers) {
    total += customer.perSecond;
    cumulative.push(total);
  }
  let atMs = fromMs;
  for (;;) {
    atMs += (-Math.log(1 - random()) / total) * 1000;
    if (atMs >= untilMs) return;
    const customer = customers[firstAtLeast(cumulative, random() * total)]!;
    const operation = pickOperation(random());
    // Durations vary ±50 % around the capacity model's warm averages.
    const durationMs = assumptions.durationsMs[operation] * (0.5 + random());
    yield { atMs, customer, operation, durationMs };
  }
}

function pickOperation(draw: number): Operation {
  if (draw < operationShares.createPet) return 'createPet';
  if (draw < operationShares.createPet + operationShares.listPets) return 'listPets';
  return 'getPet';
}

function firstAtLeast(sorted: number[], value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
