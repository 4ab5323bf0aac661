import type { PlanChoice } from '../../../admin/key-admin';
import type { PlanName } from '../../../definitions/plans';
import { type FaultRates, noFaults } from '../simulated-dynamodb';
import type { Setup, World } from './world';

/** Shapes the scenarios of workloads/ share: plans, instances, faults, traffic. */

export const DAY_MS = 86_400_000;

/** A UTC midnight some day of 2026, drawn. */
export function someMidnight(random: () => number): number {
  return Date.parse('2026-03-02T00:00:00Z') + Math.floor(random() * 200) * DAY_MS;
}

/** A plan: Free, Pro, Business, or Enterprise with custom limits (some with a day of only a few minutes' worth). */
export function drawPlan(random: () => number): PlanChoice {
  const plans: PlanName[] = ['free', 'pro', 'business', 'enterprise'];
  const plan = plans[Math.floor(random() * plans.length)]!;
  if (plan !== 'enterprise') return { plan };
  const perMinute = [5, 10, 20, 40, 60, 120, 600][Math.floor(random() * 7)]!;
  return { plan, customLimits: { perMinute, perDay: perMinute * [1, 2, 5, 20][Math.floor(random() * 4)]! } };
}

/** `count` instances; the first on true time, the others skewed by up to 20 ms or 1 s; some frozen a while. */
export function drawInstances(random: () => number, count: number, startMs: number, endMs: number): Setup['instances'] {
  return Array.from({ length: count }, (_, index) => {
    const skewMs = index === 0 ? 0 : Math.round((random() * 2 - 1) * (random() < 0.5 ? 20 : 1_000));
    const from = startMs + Math.floor(random() * (endMs - startMs));
    const frozen = index > 0 && random() < 0.3 ? [{ from, until: from + 10_000 + Math.floor(random() * 60_000) }] : [];
    return { skewMs, frozen };
  });
}

/** Faults of the store, on half the histories: throttles, lost answers (half of them recovered by the SDK's retry), late writes, transaction conflicts. */
export function drawFaults(random: () => number): FaultRates {
  if (random() < 0.5) return noFaults;
  return { throttle: 0.01, lostAnswer: 0.01, sdkRetry: 0.5, late: 0.01, transactionConflict: random() < 0.3 ? 0.01 : 0 };
}

/** Requests in phases of 5 to 25 s, each at its own rate, some busy enough for leases with spare. */
export function phases(world: World, fromMs: number, toMs: number, rates = [0.2, 0.5, 1, 2, 6]): void {
  let at = fromMs;
  while (at < toMs) {
    const phaseEnd = Math.min(toMs, at + 5_000 + world.random() * 20_000);
    const perSecond = rates[Math.floor(world.random() * rates.length)]!;
    while (at < phaseEnd) {
      at += Math.max(1, Math.round(-Math.log(1 - world.random()) * (1000 / perSecond)));
      if (at < phaseEnd) world.request(at, { secret: world.random() < 0.2 ? 'older' : 'newest' });
    }
    at = phaseEnd;
  }
}

/** A burst of requests right away: a client that keeps calling after its 429 (the ban rule's case). */
export function flood(world: World, perMinute: number, state: { until: number }): void {
  if (world.now < state.until) return;
  const burst = Math.min(40, perMinute);
  for (let index = 0; index < burst; index++) world.request(world.now + 1 + index * 25, { flood: true });
  state.until = world.now + 1 + burst * 25;
}
