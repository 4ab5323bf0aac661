import { BanReader, refusedAtGateway } from './bans';

/**
 * The rate limiter (decisions 8 and 9), the only door into functions/rate-limit/.
 * Two verbs: `RateLimiter.admit`, the verdict on one request of an operation
 * (its window and headers, its refusal, and how to take back its charge when
 * it is answered 503), and `BanCheck.refusedUntil`, the authorizer's look at a
 * customer's ban. How it counts (leases of allowance on one counter item per
 * customer and day) is docs/architecture.md's "How the limiter counts"; the
 * invariant of what one instance holds is written once, at the top of
 * allowance.ts (Allowance).
 */
export { RateLimiter } from './limiter';
export type { Verdict } from './windows';

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
// usage.
export type { CounterStore } from './counter-store';
export { CounterTable, type CustomerChange, customerChangeUpdates } from './counter-table';
export { COUNTER_RETENTION_DAYS, type DayUsage, UsageCounters } from './usage';
