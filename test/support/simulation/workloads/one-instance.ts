import { DAY_MS, drawPlan, flood, phases, someMidnight } from '../traffic';
import type { Scenario } from '../world';

/**
 * One function instance serves the customer, the store never fails: the case
 * where docs/clients.md promises exactness (Remaining exact, the whole window
 * served, the ban at exactly the N-th refusal). Busy phases make the instance
 * lease spare; plan changes, 503s refunded at once, and a client that floods
 * after its 429s on most histories; some cross midnight.
 */
export const scenario: Scenario = {
  name: 'one-instance',
  weight: 20,
  setup(random) {
    const crossesMidnight = random() < 0.3;
    const day = someMidnight(random);
    const startMs = crossesMidnight ? day + DAY_MS - 60_000 - Math.floor(random() * 120_000) : day + Math.floor(random() * 80_000_000);
    const durationMs = 70_000 + Math.floor(random() * 110_000);
    const stubborn = random() < 0.6;
    return {
      startMs,
      plan: drawPlan(random),
      instances: [{ skewMs: 0, frozen: [] }],
      faults: { throttle: 0, lostAnswer: 0, sdkRetry: 0, late: 0 },
      share503: 0.04,
      lateRefunds: false,
      description: `one instance, ${Math.round(durationMs / 1000)} s, no faults; ${stubborn ? 'a client that floods after 429s' : 'a client that backs off'}`,
      extra: { durationMs, stubborn, flooding: { until: 0 } },
    };
  },
  start(world) {
    const { durationMs } = world.setup.extra as { durationMs: number };
    phases(world, world.startMs, world.startMs + durationMs, [0.5, 1, 2, 6]);
    for (let changes = Math.floor(world.random() * 3); changes > 0; changes--) {
      world.setPlan(world.startMs + Math.floor(world.random() * durationMs), drawPlan(world.random));
    }
  },
  onAnswer(answer, world) {
    const extra = world.setup.extra as { stubborn: boolean; flooding: { until: number } };
    if (extra.stubborn && answer.status === 429 && answer.rateLimit) flood(world, answer.rateLimit.limit, extra.flooding);
  },
};
