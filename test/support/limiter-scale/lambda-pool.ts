import type { RateLimiter } from '../../../functions/rate-limit';

/**
 * One function's execution environments as Lambda keeps them, for the scale
 * mode (test/support/limiter-scale/scale-run.ts). What AWS documents
 * ("Lambda scaling behavior" and "Understanding Lambda function scaling",
 * AWS Lambda Developer Guide): a function's concurrency is its requests per
 * second times their average duration; an environment serves one request at a
 * time; each function scales out by at most 1,000 environments every 10
 * seconds. What AWS does not document, chosen here and said in SCALING.md:
 * how long an idle environment stays warm (idleReapMs), how long one lives
 * however busy (lifetimeMs), and which warm environment a request reaches:
 * both `random` and `mostRecentlyUsed` are run, and the claim must hold for each.
 */
export type Routing = 'random' | 'mostRecentlyUsed';

export const lambdaLifecycle = {
  /** Reaped after this long without a request: AWS says only "for a while"; 10 minutes is our choice. */
  idleReapMs: 10 * 60_000,
  /** Recycled after this long whatever its traffic: AWS documents no figure; 2 hours is our choice. */
  lifetimeMs: 2 * 3_600_000,
  /**
   * "every 10 seconds, Lambda can allocate at most 1,000 additional execution environment instances ... to each of your
   * functions" ("Lambda scaling behavior", https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html; Lambda refills
   * it continuously, here once per 10 s window). Past it a request fails with a throttling error (429), counted here a 5xx.
   */
  scaleOut: { environments: 1_000, everyMs: 10_000 },
} as const;

export interface Instance {
  limiter: RateLimiter;
  bornMs: number;
  lastUsedMs: number;
  busyUntilMs: number;
}

export interface PoolOptions {
  routing: Routing;
  random: () => number;
  /** A fresh instance's limiter: an empty memory, as a new environment has. */
  newLimiter: () => RateLimiter;
}

/**
 * The warm environments a steady load of `concurrency` (requests per second ×
 * duration) keeps when the run simulates only a sample of its requests. The
 * busy count of Poisson arrivals is Poisson with mean C (an M/G/∞ queue), and a
 * new environment starts only when every warm one is busy, so the pool is the
 * highest busy count the load reached while no environment was reaped:
 * within the idle time under most-recently-used routing (the deepest ones of
 * the stack go idle), within a lifetime under random routing (every warm one
 * keeps being reached). That peak is about C + z·√C with z = √(2 ln(T / d)),
 * the tail of T / d independent draws of a duration d.
 */
export function warmPoolSize(concurrency: number, durationMs: number, routing: Routing): number {
  const periodMs = routing === 'random' ? lambdaLifecycle.lifetimeMs : lambdaLifecycle.idleReapMs;
  const z = Math.sqrt(2 * Math.log(periodMs / durationMs));
  return Math.max(1, Math.ceil(concurrency + z * Math.sqrt(concurrency)));
}

/** Seconds a cold function takes to scale out to `size` environments at Lambda's documented rate. */
export function scaleOutSeconds(size: number): number {
  const { environments, everyMs } = lambdaLifecycle.scaleOut;
  return (Math.ceil(size / environments) * everyMs) / 1000;
}

/**
 * Every request of the function simulated: an environment per concurrent
 * request, started when every warm one is busy (within the scale-out rate),
 * reaped when idle, recycled when old; the request goes to a free one chosen
 * by the routing.
 */
export class ExplicitPool {
  readonly instances: Instance[] = [];
  /** Requests Lambda refused: every environment busy and the scale-out rate spent. */
  throttled = 0;
  private scaleOutWindow = { startMs: Number.NEGATIVE_INFINITY, started: 0 };

  constructor(private readonly options: PoolOptions) {}

  route(nowMs: number, durationMs: number): Instance | undefined {
    this.reap(nowMs);
    const free = this.instances.filter((instance) => instance.busyUntilMs <= nowMs);
    const chosen = free.length > 0 ? this.choose(free) : this.start(nowMs);
    if (!chosen) {
      this.throttled += 1;
      return undefined;
    }
    chosen.lastUsedMs = nowMs;
    chosen.busyUntilMs = nowMs + durationMs;
    return chosen;
  }

  private choose(free: Instance[]): Instance {
    if (this.options.routing === 'random') return free[Math.floor(this.options.random() * free.length)]!;
    return free.reduce((latest, instance) => (instance.lastUsedMs > latest.lastUsedMs ? instance : latest));
  }

  private start(nowMs: number): Instance | undefined {
    const { environments, everyMs } = lambdaLifecycle.scaleOut;
    if (nowMs - this.scaleOutWindow.startMs >= everyMs) this.scaleOutWindow = { startMs: nowMs, started: 0 };
    if (this.scaleOutWindow.started >= environments) return undefined;
    this.scaleOutWindow.started += 1;
    const instance = { limiter: this.options.newLimiter(), bornMs: nowMs, lastUsedMs: nowMs, busyUntilMs: nowMs };
    this.instances.push(instance);
    return instance;
  }

  private reap(nowMs: number): void {
    const { idleReapMs, lifetimeMs } = lambdaLifecycle;
    for (let index = this.instances.length - 1; index >= 0; index--) {
      const instance = this.instances[index]!;
      const idle = nowMs - instance.lastUsedMs >= idleReapMs;
      const old = nowMs - instance.bornMs >= lifetimeMs;
      if (instance.busyUntilMs <= nowMs && (idle || old)) this.instances.splice(index, 1);
    }
  }
}

/**
 * A sample of the function's requests simulated, the rest of its load
 * (unsimulated) keeping `size` environments warm and cycling every one of
 * them: whichever the routing, the environment free at a sampled request's
 * arrival is one the unsimulated load just released, any of the warm ones
 * alike. Births are spread over a lifetime, so environments are recycled at
 * the steady rate size / lifetime; a recycled one starts with an empty memory.
 */
export class SampledPool {
  private readonly slots: (Instance | undefined)[];
  private readonly bornOffsetMs: number[];
  recycled = 0;

  constructor(
    readonly size: number,
    private readonly options: PoolOptions,
    startMs: number,
  ) {
    this.slots = new Array(size).fill(undefined);
    this.bornOffsetMs = Array.from({ length: size }, () => startMs - options.random() * lambdaLifecycle.lifetimeMs);
  }

  route(nowMs: number): Instance {
    const slot = Math.floor(this.options.random() * this.size);
    let instance = this.slots[slot];
    if (!instance) {
      instance = { limiter: this.options.newLimiter(), bornMs: this.bornOffsetMs[slot]!, lastUsedMs: nowMs, busyUntilMs: nowMs };
      this.slots[slot] = instance;
    }
    if (nowMs - instance.bornMs >= lambdaLifecycle.lifetimeMs) {
      instance = { limiter: this.options.newLimiter(), bornMs: nowMs, lastUsedMs: nowMs, busyUntilMs: nowMs };
      this.slots[slot] = instance;
      this.recycled += 1;
    }
    instance.lastUsedMs = nowMs;
    return instance;
  }
}
