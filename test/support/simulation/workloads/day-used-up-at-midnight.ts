import { DAY_MS, drawFaults, drawInstances, someMidnight } from '../traffic';
import type { Scenario } from '../world';

/**
 * An Enterprise customer whose day is a minute or two's worth uses it up
 * just before midnight. Its clients honour Retry-After (docs/clients.md,
 * "What to do"), so they are never banned: after quota_exceeded they wait
 * for 00:00 UTC and call again. quota_exceeded must be true before midnight
 * (within the day's own bound) and must stop at midnight; what each instance
 * owed yesterday's counters must not reach today's.
 */
export const scenario: Scenario = {
  name: 'day-used-up-at-midnight',
  weight: 15,
  setup(random) {
    const midnight = someMidnight(random) + DAY_MS;
    const perMinute = [5, 10, 20, 40][Math.floor(random() * 4)]!;
    const startMs = midnight - 120_000 - Math.floor(random() * 120_000);
    const endMs = midnight + 90_000;
    const instances = 1 + Math.floor(random() * 3);
    const faults = random() < 0.3 ? drawFaults(random) : { throttle: 0, lostAnswer: 0, sdkRetry: 0, late: 0 };
    const clients = 1 + Math.floor(random() * 4);
    return {
      startMs,
      plan: { plan: 'enterprise', customLimits: { perMinute, perDay: perMinute * (1 + Math.floor(random() * 3)) } },
      instances: drawInstances(random, instances, startMs, endMs),
      faults,
      share503: 0.03,
      lateRefunds: instances > 1 && random() < 0.5,
      description: `${perMinute}/min, a day of a few minutes' worth, ${clients} clients honouring Retry-After from ${Math.round((midnight - startMs) / 1000)} s before midnight`,
      extra: { endMs, clients, perSecond: [1, 2, 4][Math.floor(random() * 3)]! },
    };
  },
  start(world) {
    const { clients } = world.setup.extra as { clients: number };
    for (let client = 0; client < clients; client++) world.request(world.startMs + 1 + Math.floor(world.random() * 1_000));
  },
  /** Each answer is one client's: its next request after a pause, or after Retry-After (a little more: clocks differ). */
  onAnswer(answer, world) {
    const { endMs, perSecond } = world.setup.extra as { endMs: number; perSecond: number };
    const pause = Math.max(1, Math.round(-Math.log(1 - world.random()) * (1000 / perSecond)));
    const wait =
      answer.status === 429 && answer.retryAfter !== undefined ? answer.retryAfter * 1000 + 50 + Math.floor(world.random() * 1_500) : pause;
    if (world.now + wait < endMs) world.request(world.now + wait);
  },
};
