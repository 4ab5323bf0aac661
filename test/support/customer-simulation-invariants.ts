import type { PlanLimits } from '../../definitions/plans';
import { spareCap } from '../../functions/rate-limit/testing';
import type { AppliedCall } from './simulated-dynamodb';

/**
 * The promises the customer simulation (test/support/customer-simulation.ts)
 * checks after every step, each by name, against the truth only a simulation
 * sees: every request served, in the order the store applied what decided it,
 * and the limits in force at that moment (docs/clients.md, "Counting" and
 * "How exact"; docs/architecture.md, "How the limiter counts").
 */
export const invariants = {
  neverA500: 'never a 500',
  servedWithinLimits: 'served within the limits in force',
  usageWithinBound: 'usage and the day count within their bound',
  remainingNeverAboveTruth: 'X-RateLimit-Remaining never above the truth',
  refusalsTellTheTruth: 'every 429 is for a reason the client can be told',
  everyHistoryChangesPlan: 'every history changes the plan at least once',
} as const;

export type InvariantName = (typeof invariants)[keyof typeof invariants];

export class InvariantBroken extends Error {
  constructor(
    readonly invariant: InvariantName,
    message: string,
  ) {
    super(`${invariant}: ${message}`);
    this.name = 'InvariantBroken';
  }
}

/** One request served (charged), placed where the store applied what decided it. */
interface ServedEntry {
  request: number;
  /** The store's sequence number of the call that decided it. */
  seq: number;
}

/**
 * What happened, as the simulation knows it: the limits in force from each
 * store sequence number on, the requests served per item minute and per day
 * (net of 503 refunds), and the writes whose answer their caller never saw.
 */
export class Truth {
  private readonly limitsFrom: { seq: number; limits: PlanLimits; atMs: number }[];
  private readonly byMinute = new Map<number, ServedEntry[]>();
  private readonly byDay = new Map<string, ServedEntry[]>();
  /** Allowance a faulted counter write may have taken or failed to give back, per minute and per day. */
  private readonly faultSlackByMinute = new Map<number, number>();
  private readonly faultSlackByDay = new Map<string, number>();

  constructor(initial: PlanLimits) {
    this.limitsFrom = [{ seq: 0, limits: initial, atMs: Number.NEGATIVE_INFINITY }];
  }

  /** A plan change whose transaction was the store's call `seq`, at the key tool's `atMs`. */
  changed(seq: number, limits: PlanLimits, atMs: number): void {
    this.limitsFrom.push({ seq, limits, atMs });
  }

  /** The limits in force for a decision made by the store's call `seq`. */
  limitsAt(seq: number): PlanLimits {
    let limits = this.limitsFrom[0]!.limits;
    for (const change of this.limitsFrom) if (change.seq < seq) limits = change.limits;
    return limits;
  }

  /** The largest spare cap of any limits in force during the history: the day's bound holds spare taken under each. */
  largestSpareCap(): number {
    return Math.max(...this.limitsFrom.map((change) => spareCap(change.limits)));
  }

  /**
   * The largest spare cap of the limits in force at any moment of a window
   * (docs/clients.md, "How exact": in a window the plan changed in, spare held
   * under the old limits counts with their cap), a second of clock skew included.
   */
  largestSpareCapDuring(startMs: number, endMs: number): number {
    const caps = this.limitsFrom
      .filter((change, index) => change.atMs < endMs && (this.limitsFrom[index + 1]?.atMs ?? Number.POSITIVE_INFINITY) > startMs - 1_000)
      .map((change) => spareCap(change.limits));
    return Math.max(...caps);
  }

  /** Records a request served, and checks it and every later one of its minute and day against the limits in force. */
  served(request: number, seq: number, minute: number, day: string): void {
    insert(this.byMinute, minute, { request, seq });
    insert(this.byDay, day, { request, seq });
    this.checkWindow(this.byMinute.get(minute)!, seq, (limits) => limits.perMinute, `minute ${iso(minute)}`);
    this.checkWindow(this.byDay.get(day)!, seq, (limits) => limits.perDay, `day ${day}`);
  }

  /** A served request answered 503 whose charge went back: no longer served. */
  refunded(request: number, minute: number, day: string): void {
    remove(this.byMinute.get(minute), request);
    remove(this.byDay.get(day), request);
  }

  /** Requests served in the minute (by the store's call `upToSeq` when given). */
  servedInMinute(minute: number, upToSeq = Number.POSITIVE_INFINITY): number {
    return (this.byMinute.get(minute) ?? []).filter((entry) => entry.seq <= upToSeq).length;
  }

  servedInDay(day: string, upToSeq = Number.POSITIVE_INFINITY): number {
    return (this.byDay.get(day) ?? []).filter((entry) => entry.seq <= upToSeq).length;
  }

  /** A counter write whose answer its caller did not see as sent (throttled, lost, late): what it may have kept from the customer. */
  faulted(call: Pick<AppliedCall, 'input'>, dayOf: (minute: number) => string): void {
    const values = (call.input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
    if (typeof values[':take'] !== 'number') return;
    const take = values[':take'] as number;
    const dayDelta = typeof values[':dayDelta'] === 'number' ? (values[':dayDelta'] as number) : take;
    const slack = Math.abs(take) + Math.abs(take - dayDelta);
    const minute = Number(values[':minute']);
    this.faultSlackByMinute.set(minute, (this.faultSlackByMinute.get(minute) ?? 0) + slack);
    this.faultSlackByDay.set(dayOf(minute), (this.faultSlackByDay.get(dayOf(minute)) ?? 0) + slack);
  }

  faultSlackOfMinute(minute: number): number {
    return this.faultSlackByMinute.get(minute) ?? 0;
  }

  faultSlackOfDay(day: string): number {
    return this.faultSlackByDay.get(day) ?? 0;
  }

  private checkWindow(entries: ServedEntry[], fromSeq: number, limitOf: (limits: PlanLimits) => number, window: string): void {
    entries.forEach((entry, index) => {
      if (entry.seq < fromSeq) return;
      const limit = limitOf(this.limitsAt(entry.seq));
      if (index >= limit) {
        throw new InvariantBroken(
          invariants.servedWithinLimits,
          `request #${entry.request} was served as the ${index + 1}th of ${window}, whose limit in force was ${limit}`,
        );
      }
    });
  }
}

function insert<K>(map: Map<K, ServedEntry[]>, key: K, entry: ServedEntry): void {
  const entries = map.get(key) ?? [];
  let at = entries.length;
  while (at > 0 && entries[at - 1]!.seq > entry.seq) at--;
  entries.splice(at, 0, entry);
  map.set(key, entries);
}

function remove(entries: ServedEntry[] | undefined, request: number): void {
  const at = entries?.findIndex((entry) => entry.request === request) ?? -1;
  if (at >= 0) entries!.splice(at, 1);
}

export function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}
