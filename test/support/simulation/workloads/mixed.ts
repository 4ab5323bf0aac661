import { DAY_MS, drawFaults, drawInstances, drawPlan, flood, phases, someMidnight } from '../traffic';
import type { Scenario } from '../world';

/**
 * The customer's everyday life on 2 to 6 instances over one to three
 * minutes, sometimes across midnight: phases of traffic, plan changes (the
 * administrator may name the plan in force: the key tool then changes
 * nothing), a rotation and revocations, 503s refunded (some only after the
 * instance served others), the store's faults on half the histories, and on
 * some a client that floods after its 429s.
 */
export const scenario: Scenario = {
  name: 'mixed',
  weight: 50,
  setup(random) {
    const crossesMidnight = random() < 0.25;
    const day = someMidnight(random);
    const startMs = crossesMidnight ? day + DAY_MS - 90_000 - Math.floor(random() * 60_000) : day + Math.floor(random() * 80_000_000);
    const durationMs = 70_000 + Math.floor(random() * 110_000);
    const stubborn = random() < 0.4;
    const faults = drawFaults(random);
    return {
      startMs,
      plan: drawPlan(random),
      instances: drawInstances(random, 2 + Math.floor(random() * 5), startMs, startMs + durationMs),
      faults,
      share503: 0.04,
      lateRefunds: random() < 0.5,
      description: `${Math.round(durationMs / 1000)} s; ${faults.throttle > 0 ? 'faults on' : 'no faults'}; ${stubborn ? 'a client that floods after 429s' : 'a client that backs off'}`,
      extra: { durationMs, stubborn, flooding: { until: 0 } },
    };
  },
  start(world) {
    const { durationMs } = world.setup.extra as { durationMs: number };
    const endMs = world.startMs + durationMs;
    phases(world, world.startMs, endMs);
    const moment = () => world.startMs + Math.floor(world.random() * (durationMs - 25_000));
    for (let changes = 1 + Math.floor(world.random() * 3); changes > 0; changes--) world.setPlan(moment(), drawPlan(world.random));
    if (world.random() < 0.4) {
      const rotation = moment();
      world.rotate(rotation, Math.floor(world.random() * 90_000));
      if (world.random() < 0.5) world.revoke(rotation + Math.floor(world.random() * 60_000), 'older');
    }
    if (world.random() < 0.1) world.revoke(endMs - Math.floor(world.random() * 20_000), 'newest');
  },
  onAnswer(answer, world) {
    const extra = world.setup.extra as { stubborn: boolean; flooding: { until: number } };
    if (extra.stubborn && answer.status === 429 && answer.rateLimit) flood(world, answer.rateLimit.limit, extra.flooding);
  },
};
