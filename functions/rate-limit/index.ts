import type { PlanLimits } from '../../definitions/plans';
import type { ApiError } from '../domain/errors';
import { BanReader, refusedAtGateway } from './bans';
import type { Caller, CounterStore } from './counter-store';
import { rateLimitHeaders } from './headers';
import { RateLimiter } from './limiter';

/**
 * The rate limiter (decisions 8 and 9), the only door into functions/rate-limit/.
 * Two verbs: `RequestLimiter.admit`, what one request of an operation may do
 * (its headers, its refusal, and how to settle it when it is answered 503), and
 * `BanCheck.refusedUntil`, the authorizer's look at a customer's ban. How it
 * counts (leases of allowance on one counter item per customer and day) is
 * docs/architecture.md's "How the limiter counts"; the invariant of what one
 * instance holds is written once, at the top of allowance.ts (Allowance).
 */

/** A caller with the limits the authorizer found for its customer (the counter item's, after a plan change, win: limiter.ts). */
type LimitedCaller = Caller & { limits: PlanLimits };

/** What the limiter says of one request. */
export interface Admission {
  /** X-RateLimit-Limit, -Remaining and -Reset: on the answer, whatever it is. */
  headers: Record<string, string>;
  /** Set when the request is refused: the 429 to answer instead. */
  refusal?: ApiError;
  /** The request is answered 503: takes back its charge (the limiter's refund), and the headers then count it no more. */
  refund(): Promise<void>;
}

/** One per function instance: it holds the allowance of the customers it serves and remembers windows it saw used up. */
export class RequestLimiter {
  private readonly limiter: RateLimiter;

  constructor(counters: CounterStore, warn?: (message: string, error: unknown) => void) {
    this.limiter = new RateLimiter(counters, warn);
  }

  /** Whether this instance already knows the request will be refused: no other work need start for it. */
  knowsRefusal(caller: LimitedCaller, nowMs: number): boolean {
    return this.limiter.knowsRefusal(caller.customerId, caller.limits, nowMs);
  }

  async admit(caller: LimitedCaller, nowMs: number): Promise<Admission> {
    const decision = await this.limiter.enforce(caller, caller.limits, nowMs);
    const headers: Record<string, string> = rateLimitHeaders(decision.window);
    return {
      headers,
      ...(decision.refusal ? { refusal: decision.refusal } : {}),
      refund: async () => {
        if (await decision.refund()) headers['X-RateLimit-Remaining'] = String(Number(headers['X-RateLimit-Remaining']) + 1);
      },
    };
  }
}

/** The authorizer's look at a customer's ban: until when the gateway itself should refuse the customer, if it should. */
export class BanCheck {
  private readonly bans: BanReader;

  constructor(
    db: ConstructorParameters<typeof BanReader>[0],
    tableName: string,
    /** How long API Gateway keeps the authorizer's answer, and how late it may arrive. */
    private readonly cache: { ttlSeconds: number; answeredWithinSeconds: number },
  ) {
    this.bans = new BanReader(db, tableName);
  }

  async refusedUntil(customerId: string, nowMs: number): Promise<number | undefined> {
    const until = await this.bans.bannedUntil(customerId, nowMs);
    return refusedAtGateway(until, nowMs, this.cache) ? until : undefined;
  }
}

// The door's other names: the counter store for the functions' wiring, the
// key tool's change of a customer (set-plan, revoke, a rotation's end) and its
// usage. Tests reach the module's parts through rate-limit/testing.ts.
export type { CounterStore } from './counter-store';
export { CounterTable, type CustomerChange, customerChangeUpdates } from './counter-table';
export { COUNTER_RETENTION_DAYS, type DayUsage, UsageCounters } from './usage';
