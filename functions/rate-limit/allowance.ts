import type { PlanLimits } from '../../definitions/plans';
import type { Caller, CounterItemState, CounterStore, LeaseTerms, LeaseWrite } from './counter-store';
import type { Used, Windows } from './windows';

/**
 * Leases of allowance (decision 8): a function instance takes part of a
 * customer's remaining allowance with one conditional write on its counter
 * item and serves the customer's next requests from it in memory. The sizing
 * rules first (pure), then Allowance: what one instance holds, and the
 * writes that change it (the counter store, rate-limit/counter-store.ts, sends them).
 *
 * The item counts what was granted, not what was served: a grant never takes
 * the window past its limit, so the key is never served past it. What an
 * instance holds unused (its spare) is lost to the key if the instance never
 * sends the key's requests again (a Lambda instance gone idle cannot give it
 * back); the item records the spare instances were granted and have not
 * released yet, across the day's minutes (an ended minute's spare is owed to
 * the day until its instance writes again), and a lease takes spare only while
 * that total stays within SPARE_SHARE of the minute's limit: so what the day
 * counts and nobody served never exceeds it, however many minutes left spare
 * behind (docs/clients.md, "How exact").
 */

/** An instance leases spare only for a key it served at least this often in the last LOOKBACK_MS: a quiet key is counted request by request (one write each, its Remaining exact). */
export const MIN_RECENT_REQUESTS = 3;
/** How far back an instance looks at its own requests of a key to size its next lease. */
export const LOOKBACK_MS = 10_000;
/** A lease's spare covers this share of the requests of the last LOOKBACK_MS (about the next 6 s at that rate): less costs more than 0.3 write units a request at a full Business minute over 20 instances (test/integration/limiter-write-units.test.ts). */
const SPARE_PER_RECENT_REQUEST = 0.625;
/** The spare recorded on a key's item, across every instance, stays within this share of the minute's limit. */
export const SPARE_SHARE = 0.1;
/**
 * A lease's spare is at most this share of what is left of the window divided
 * by the instances leasing this minute: leases shrink as the window runs out,
 * and a client that spreads its requests evenly uses what each instance holds
 * before the window is used up.
 */
const SHARE_OF_WHAT_IS_LEFT = 0.5;

/** The most spare the instances together may hold of a key's minute (recorded on its item). */
export function spareCap(limits: PlanLimits): number {
  return Math.floor(limits.perMinute * SPARE_SHARE);
}

/** What the sizing of one lease looks at: what is left (WhatIsLeft, below), and the instance's own pace. */
export interface LeaseSizing extends WhatIsLeft {
  limits: PlanLimits;
  /** Requests this instance served for the key in the last LOOKBACK_MS. */
  recentRequests: number;
  /** Milliseconds left in the minute. */
  msLeftInMinute: number;
  /** Spare the item has room for (spareCap minus what others hold, plus what this instance gives back). */
  spareRoom: number;
}

/**
 * The spare of the next lease (the lease takes 1 + spare: the request that
 * asks, and spare for the requests after it). Enough for the next few seconds
 * at the instance's own recent rate, never more than that rate uses before the
 * minute ends (half of it), half of what is left shared among the instances
 * leasing this minute, or the item's room for spare.
 */
export function leaseSpare(sizing: LeaseSizing): number {
  const { recentRequests, msLeftInMinute } = sizing;
  if (recentRequests < MIN_RECENT_REQUESTS) return 0;
  const byRate = Math.floor(recentRequests * SPARE_PER_RECENT_REQUEST);
  // Half what the rate would use before the minute ends: a rate can only be guessed, and what is not used by then is lost to the key.
  const byTimeLeft = Math.floor((recentRequests * msLeftInMinute) / LOOKBACK_MS / 2);
  return Math.max(0, Math.min(byRate, byTimeLeft, spareByWhatIsLeft(sizing), sizing.spareRoom));
}

/** What is left of the window as one instance sees it. */
export interface WhatIsLeft {
  /** Allowance of the minute and of the day not granted yet, as the item last said (the day's counting what this instance is to give back). */
  minuteLeft: number;
  dayLeft: number;
  /** Instances that leased allowance of the key this minute (at least 1). */
  instances: number;
}

/** The spare what is left allows one lease: half of it, less the asking request, shared among the instances leasing. */
function spareByWhatIsLeft(left: WhatIsLeft): number {
  const afterThisRequest = Math.min(left.minuteLeft, left.dayLeft) - 1;
  return Math.floor((afterThisRequest * SHARE_OF_WHAT_IS_LEFT) / Math.max(1, left.instances));
}

/**
 * Whether the window is at its end: what is left is too little for a lease to
 * carry spare, so every request is counted on the item, and an instance still
 * holding allowance gives it back at its next request (Allowance.serveFromSpare). A key
 * whose requests keep reaching the instances serving it is then refused only
 * when nothing of its window is left anywhere: the instances' leases shrink as
 * the window runs out, and what they hold at its end goes back before the last
 * grants (docs/clients.md, "The bound").
 */
export function windowEnding(left: WhatIsLeft): boolean {
  return spareByWhatIsLeft(left) < 1;
}

const MAX_REMEMBERED = 2_000;

/** The requests an instance served for one key, for sizing its leases (times in ms, the oldest first). */
export class RecentRequests {
  private readonly times: number[] = [];

  record(nowMs: number): void {
    this.times.push(nowMs);
    this.forgetBefore(nowMs - LOOKBACK_MS);
    // Bounded when a clock stands still (tests): more than this sizes no larger lease.
    if (this.times.length > MAX_REMEMBERED) this.times.shift();
  }

  countAt(nowMs: number): number {
    this.forgetBefore(nowMs - LOOKBACK_MS);
    return this.times.length;
  }

  private forgetBefore(ms: number): void {
    let stale = 0;
    while (stale < this.times.length && (this.times[stale] as number) < ms) stale++;
    if (stale > 0) this.times.splice(0, stale);
  }
}

/** What the allowance of every customer on one instance shares: the counter store, the instance's id and its sequence of writes. */
export interface LeasingInstance {
  counters: CounterStore;
  id: string;
  /** The instance's next sequence number: a repeated or late write of the same lease applies once. */
  nextSeq(): number;
  warn(message: string, error: unknown): void;
}

/** One request as a lease write names it. */
export interface Asking {
  caller: Caller;
  windows: Windows;
  nowMs: number;
}

/** A request served, with what its customer has now used; `generation` names the lease a refund goes back to. */
export interface Served {
  served: Used;
  generation: number;
}

/** Where a write's outcome leaves what it gave and asked for. */
type WriteOutcome = 'applied' | 'refused' | 'unknown';

/** A lease write's outcome, and the item as it is after (when known); `error` when its answer was lost. */
type Sent =
  | { outcome: 'applied' | 'refused'; state: CounterItemState }
  | { outcome: WriteOutcome; state?: CounterItemState; error: unknown };

/**
 * What one function instance holds of one customer's windows, and the lease
 * writes that change it: the spare its leases were granted on the customer's
 * counter item and it has not served yet, the spare its last write recorded
 * there, and the day return it owes. The methods below are the only code that
 * changes them.
 *
 * The invariant, for every customer and UTC day, over all instances:
 *   item.dayGranted = requests served and not refunded + Σ spare + Σ dayReturn
 *                     + what instances gone idle, or writes of unknown outcome, took;
 *   item.minuteGranted ≤ the minute's limit (every grant is conditional on it),
 *   so the requests served never pass the limit;
 *   spare + dayReturn ≤ recordedSpare on each instance, Σ recordedSpare ≤ item.spare
 *   (unknown outcomes leave the item more), and a lease that adds spare keeps
 *   item.spare ≤ spareCap: what the day counts beyond the requests served is
 *   at most spareCap of the largest limits in force that day (plus 503s
 *   refunded after their lease moved on, owed until the instance writes again).
 * A change of limits changes none of these: spare granted under the old
 * limits is served only while the new ones leave room (serveFromSpare), and a
 * lease that adds no spare is never refused for the cap.
 * Each method keeps it: serving moves one from spare to served; a lease's
 * grant reaches the item and the spare together; a write that gives back
 * (at the window end, or a 503's refund) takes what it gives from here when
 * it is sent, and holds it again only if the write was refused (an unknown
 * outcome drops it: never served twice); a minute's end moves its spare to
 * the day return.
 */
export class Allowance {
  /** The minute (Unix seconds) of the spare; 0 when none is held. */
  private minuteStart = 0;
  private spareHeld = 0;
  /** The spare this instance's writes recorded on the day's item and not released yet (the item's spare cap counts it); released by its next write, of this minute or a later one. */
  private recordedSpare = 0;
  /** Allowance of `day`'s ended minutes this instance never served: given back with its next write. */
  private dayReturn = 0;
  private day = '';
  /** Changes with every lease: a refund knows whether the lease it came from is still the one held. */
  private generation = 0;
  private readonly recent = new RecentRequests();
  /** The counter item as last read or written (not part of the invariant: what the next lease is sized from). */
  seen?: CounterItemState;

  constructor(private readonly instance: LeasingInstance) {}

  /** Spare held for the current minute: the request may be served from it once a read shows the customer's state. */
  get spare(): number {
    return this.spareHeld;
  }

  /** Moves to the current windows: a minute's end turns its spare into day return; a new day starts with none. */
  rollOver(windows: Windows): void {
    if (this.day !== windows.day) {
      // Another day's item: what was recorded or owed on the last one stays there (usage's bound, docs/clients.md).
      this.day = windows.day;
      this.dayReturn = 0;
      this.recordedSpare = 0;
    }
    if (this.minuteStart !== 0 && this.minuteStart < windows.minuteStart) {
      if (this.minuteStart >= windows.dayEnd - 86_400) this.dayReturn += this.spareHeld;
      this.moveTo(0);
    }
  }

  /** What is left of the windows as the item shows it and this instance counts it (its day return included). */
  left(state: Pick<CounterItemState, 'minuteGranted' | 'dayGranted' | 'leaseHolders'>, limits: PlanLimits): WhatIsLeft {
    return {
      minuteLeft: limits.perMinute - state.minuteGranted,
      dayLeft: limits.perDay - state.dayGranted + this.dayReturn,
      instances: Math.max(1, state.leaseHolders),
    };
  }

  /**
   * Serves the request the item was just read for from the spare, when the
   * spare is of the item's minute and the limits were not lowered under what
   * was granted (only a plan change does that: then the spare goes back to the
   * day). At the window end (windowEnding) it gives back all it holds, so the
   * instances still serving the customer are granted it.
   */
  async serveFromSpare(asking: Asking, state: CounterItemState, limits: PlanLimits): Promise<Served | undefined> {
    if (this.spareHeld === 0 || state.minuteStart !== this.minuteStart) return undefined;
    const left = this.left(state, limits);
    if (left.minuteLeft + this.spareHeld < 1 || left.dayLeft + this.spareHeld < 1) {
      this.returnSpareToDay();
      return undefined;
    }
    const served = this.serve(state, asking.nowMs);
    const back = this.giveBackTerms(state, limits);
    const sent = back && (await this.send(back, asking, limits));
    if (sent && 'error' in sent && sent.outcome === 'unknown') this.instance.warn('rate-limit allowance not given back', sent.error);
    return served;
  }

  /**
   * Leases 1 + spare with one conditional write and serves the request from
   * it; a refused write answers the item as it is (a minute moved on, a plan
   * changed, a window used up). A write whose answer was lost throws (503).
   */
  async lease(asking: Asking, limits: PlanLimits): Promise<Served | { refusedBy: CounterItemState }> {
    const seen = this.seen?.day === asking.windows.day ? this.seen : undefined;
    const sent = await this.send(this.leaseTerms(seen, limits, asking), asking, limits);
    if ('error' in sent) throw sent.error;
    return sent.outcome === 'applied' ? this.serve(sent.state, asking.nowMs) : { refusedBy: sent.state };
  }

  /**
   * Takes back a 503's charge of a request served from the lease `generation`:
   * when that lease is still held, the charge comes back to the spare and one
   * write gives it to the item (refused, it stays spare for the customer's
   * next request); otherwise it joins the day return, with no write. True
   * unless whether it went back is unknown.
   */
  async refund(asking: Asking, generation: number, limits: PlanLimits): Promise<boolean> {
    if (generation !== this.generation || this.minuteStart === 0) {
      if (asking.windows.day === this.day) this.dayReturn += 1;
      return true;
    }
    this.spareHeld += 1;
    const terms: LeaseTerms = { minuteStart: this.minuteStart, shape: 'same_minute', take: -1, spare: 0, releaseSpare: 0, dayReturn: 0 };
    return (await this.send(terms, asking, limits)).outcome !== 'unknown';
  }

  /** Serves one request from the spare; what the customer has used, as the item and this instance count it (what it holds is not used). */
  private serve(state: CounterItemState, nowMs: number): Served {
    this.spareHeld -= 1;
    this.recent.record(nowMs);
    const served = { minute: state.minuteGranted - this.spareHeld, day: state.dayGranted - this.spareHeld - this.dayReturn };
    return { served, generation: this.generation };
  }

  /** At the window end, the terms that give back everything held (the minute's spare, its record, the day return). */
  private giveBackTerms(state: CounterItemState, limits: PlanLimits): LeaseTerms | undefined {
    if ((this.spareHeld === 0 && this.dayReturn === 0) || !windowEnding(this.left(state, limits))) return undefined;
    return {
      minuteStart: this.minuteStart,
      shape: 'same_minute',
      take: -this.spareHeld,
      spare: 0,
      releaseSpare: this.recordedSpare,
      dayReturn: this.dayReturn,
    };
  }

  /**
   * The next lease, sized from the item as last seen (a stale view only costs
   * a refused write, which shows the item as it is): 1 for the asking request
   * and the spare leaseSpare allows; it releases the spare recorded for its
   * minute and returns the day return.
   */
  private leaseTerms(seen: CounterItemState | undefined, limits: PlanLimits, { windows, nowMs }: Asking): LeaseTerms {
    const minuteStart = Math.max(windows.minuteStart, seen?.minuteStart ?? 0);
    // Never seen (an instance's first request of the customer today): guess it is busy and another instance started the minute.
    const shape = seen && seen.minuteStart < minuteStart ? 'new_minute' : 'same_minute';
    const releaseSpare = this.recordedSpare;
    const item = { minuteGranted: shape === 'new_minute' ? 0 : (seen?.minuteGranted ?? 0), spare: seen?.spare ?? 0 };
    const left = this.left({ minuteGranted: item.minuteGranted, dayGranted: seen?.dayGranted ?? 0, leaseHolders: 1 }, limits);
    const spare = leaseSpare({
      ...left,
      limits,
      recentRequests: this.recent.countAt(nowMs),
      msLeftInMinute: (minuteStart + 60) * 1000 - nowMs,
      spareRoom: spareCap(limits) - item.spare + releaseSpare,
      // An instance not yet among the minute's holders is one more.
      instances: shape === 'new_minute' ? 1 : Math.max(1, seen?.leaseHolders ?? 1) + (seen?.leaseSeq === undefined ? 1 : 0),
    });
    // Spare still held of an earlier minute (the item's moved on) is owed to the day: this write returns it (sent).
    const owed = this.minuteStart === minuteStart ? this.dayReturn : this.dayReturn + this.spareHeld;
    return { minuteStart, shape, take: 1 + spare, spare, releaseSpare, dayReturn: owed };
  }

  /**
   * Sends one lease write of these terms: what it gives back counts as given
   * from the moment it is sent (so it is never given twice), and its outcome
   * settles the rest. A write whose answer is lost is looked at with one read:
   * one that landed is applied; otherwise its outcome stays unknown (a late
   * attempt may still land), and what it gave back is held by no one.
   */
  private async send(terms: LeaseTerms, { caller, windows, nowMs }: Asking, limits: PlanLimits): Promise<Sent> {
    const { counters, id } = this.instance;
    const lease: LeaseWrite = {
      ...{ kind: 'lease', caller, windows, instanceId: id, nowSeconds: Math.floor(nowMs / 1000), seq: this.instance.nextSeq() },
      ...{ limits, spareCap: spareCap(limits), ...terms },
    };
    this.sent(terms);
    const sent = await counters.write(lease).then(
      ({ applied, state }): Sent => ({ outcome: applied || landed(state, lease) ? 'applied' : 'refused', state }),
      async (error: unknown): Promise<Sent> => {
        const state = await counters.read(caller, windows, id).catch(() => undefined);
        return { outcome: state && landed(state, lease) ? 'applied' : 'unknown', ...(state ? { state } : {}), error };
      },
    );
    this.settled(terms, sent.outcome);
    if (sent.state) this.seen = sent.state;
    return sent;
  }

  private sent(terms: LeaseTerms): void {
    if (this.minuteStart !== terms.minuteStart) {
      // A lease of another minute (the item's clock ran ahead): the spare of this one goes back to the day.
      this.returnSpareToDay();
      this.moveTo(terms.minuteStart);
    } else if (terms.take > 0) this.generation += 1;
    this.spareHeld += Math.min(0, terms.take);
    this.recordedSpare -= terms.releaseSpare;
    this.dayReturn -= terms.dayReturn;
  }

  /** Applied (or landed): holds what it granted; refused: holds again what it gave; unknown: neither. */
  private settled(terms: LeaseTerms, outcome: WriteOutcome): void {
    if (outcome === 'applied') {
      this.spareHeld += Math.max(0, terms.take);
      this.recordedSpare += terms.spare;
    } else if (outcome === 'refused') {
      this.spareHeld -= Math.min(0, terms.take);
      this.recordedSpare += terms.releaseSpare;
      this.dayReturn += terms.dayReturn;
    }
  }

  private returnSpareToDay(): void {
    this.dayReturn += this.spareHeld;
    this.spareHeld = 0;
  }

  /** Holds the spare of another minute (none yet); the spare recorded stays recorded until a write releases it. */
  private moveTo(minuteStart: number): void {
    this.minuteStart = minuteStart;
    this.spareHeld = 0;
    this.generation += 1;
  }
}

/** Whether the item shows this write applied: our own, landed on an attempt whose answer was lost. */
function landed(state: CounterItemState, write: { minuteStart: number; seq: number }): boolean {
  return state.minuteStart === write.minuteStart && state.leaseSeq === write.seq;
}
