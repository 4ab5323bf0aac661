import { drawFaults, drawInstances, flood, someMidnight } from '../traffic';
import type { Scenario } from '../world';

/**
 * A client floods into the ban rule, then keeps knocking every 5 to 40 s
 * through the 15-minute suspension and for 7 minutes after it: the ban must
 * start at the N-th refusal, every 429 key_suspended (the function's, with its
 * countdown, and the gateway's cached Deny) must be true, and none may come
 * after the suspension's end. On 1 to 3 instances, some histories with the
 * store's faults; some start before midnight, so the ban crosses it.
 */
export const scenario: Scenario = {
  name: 'ban-waited-out',
  weight: 15,
  setup(random) {
    const day = someMidnight(random);
    const startMs = random() < 0.3 ? day - 300_000 - Math.floor(random() * 300_000) : day + Math.floor(random() * 80_000_000);
    const perMinute = [5, 10, 20, 60][Math.floor(random() * 4)]!;
    const durationMs = 24 * 60_000;
    const faults = random() < 0.5 ? drawFaults(random) : { throttle: 0, lostAnswer: 0, sdkRetry: 0, late: 0 };
    return {
      startMs,
      plan: { plan: 'enterprise', customLimits: { perMinute, perDay: perMinute * 100 } },
      instances: drawInstances(random, 1 + Math.floor(random() * 3), startMs, startMs + 60_000),
      faults,
      share503: 0,
      lateRefunds: false,
      description: `a flood into the ban at ${perMinute}/min, then a request every 5 to 40 s for ${durationMs / 60_000} minutes`,
      extra: { durationMs, flooding: { until: 0 } },
    };
  },
  start(world) {
    const { durationMs } = world.setup.extra as { durationMs: number };
    // The minute's limit and a few more in the first seconds: the minute is used up, and the 429s start the flood.
    const { perMinute } = world.setup.plan.customLimits!;
    for (let index = 0; index < perMinute + 5; index++) world.request(world.startMs + 1 + index * 40);
    for (let at = world.startMs + 60_000; at < world.startMs + durationMs; at += 5_000 + Math.floor(world.random() * 35_000))
      world.request(at);
  },
  onAnswer(answer, world) {
    const extra = world.setup.extra as { flooding: { until: number } };
    if (answer.status === 429 && answer.code === 'rate_limited' && answer.rateLimit) flood(world, answer.rateLimit.limit, extra.flooding);
  },
};
