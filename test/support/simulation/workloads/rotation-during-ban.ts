import { drawInstances, flood, someMidnight } from '../traffic';
import type { Scenario } from '../world';

/**
 * The administrator rotates the secret of a customer in the middle of its
 * ban: the ban is the customer's, not a secret's, so the new secret is refused
 * key_suspended until the same end as the old one, and both work again after
 * it (the old one until its grace ends).
 */
export const scenario: Scenario = {
  name: 'rotation-during-ban',
  weight: 5,
  setup(random) {
    const startMs = someMidnight(random) + Math.floor(random() * 80_000_000);
    const perMinute = [5, 10, 20][Math.floor(random() * 3)]!;
    return {
      startMs,
      plan: { plan: 'enterprise', customLimits: { perMinute, perDay: perMinute * 100 } },
      instances: drawInstances(random, 1 + Math.floor(random() * 3), startMs, startMs + 60_000),
      faults: { throttle: 0, lostAnswer: 0, sdkRetry: 0, late: 0 },
      share503: 0,
      lateRefunds: false,
      description: `a flood into the ban at ${perMinute}/min, a rotation during it, then a request every 5 to 40 s with either secret`,
      extra: { flooding: { until: 0 } },
    };
  },
  start(world) {
    for (let at = world.startMs + 1; at < world.startMs + 8_000; at += 40) world.request(at);
    world.rotate(world.startMs + 60_000 + Math.floor(world.random() * 600_000), 30_000 + Math.floor(world.random() * 600_000));
    for (let at = world.startMs + 60_000; at < world.startMs + 22 * 60_000; at += 5_000 + Math.floor(world.random() * 35_000)) {
      world.request(at, { secret: world.random() < 0.3 ? 'older' : 'newest' });
    }
  },
  onAnswer(answer, world) {
    const extra = world.setup.extra as { flooding: { until: number } };
    if (answer.status === 429 && answer.code === 'rate_limited' && answer.rateLimit) flood(world, answer.rateLimit.limit, extra.flooding);
  },
};
