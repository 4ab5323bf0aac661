import type { PlanLimits } from '../../definitions/plans';
import { ApiError } from '../domain/errors';
import { leaseSpare, RecentRequests, spareCap, type WhatIsLeft, windowEnding } from './allowance';
import {
  BAN_DURATION_SECONDS,
  banThreshold,
  countedVerdict,
  refusalBatch,
  refusedVerdict,
  type Verdict,
  type Windows,
  windowsAt,
} from './windows';

/**
 * A caller as the limiter counts it: the secret it came with (whose revocation
 * or expiry refuses it) and its customer, whose counters it counts on
 * (api-keys.ts, Customer): one set of limits, refusals and bans for the
 * customer, whichever secret it sends.
 */
export interface CountedKey {
  keyId: string;
  customerId: string;
}

/** A key's counter item of one UTC day as one read or write found it: plain facts, the limiter decides. */
export interface CounterItemState {
  /** The UTC day of the item, `YYYY-MM-DD`. */
  day: string;
  /** Unix seconds of the minute the item counts; 0 when it counts none yet. */
  minuteStart: number;
  /** Allowance granted in that minute (by leases, net of none: unused allowance of a minute expires with it). */
  minuteGranted: number;
  /** Allowance granted that day, net of what instances gave back. */
  dayGranted: number;
  /** Spare the instances were recorded to hold in that minute (rate-limit/allowance.ts). */
  spare: number;
  /** The last lease sequence number of the asking instance applied in that minute. */
  leaseSeq?: number;
  /** How many instances leased allowance in that minute. */
  leaseHolders: number;
  /** Limits the key tool set on the item (a plan change the authorizer's cached answer may not show yet). */
  keyLimits?: PlanLimits;
  /** The asking key's own marks (the key tool's revocation and expiry). */
  keyRevoked: boolean;
  keyExpiresAt?: number;
  /** Unix seconds; 0 when never suspended. */
  suspendedUntil: number;
  /** The refusals recorded for the ban rule, and the minute they are of. */
  refusedMinute: number;
  refusedCount: number;
}

/** How a lease write brings the item to its minute. */
export type LeaseShape =
  /** The item counts this minute already. */
  | 'same_minute'
  /** The item counts an earlier minute, or none: the lease starts this one. */
  | 'new_minute';

/** One conditional write of a lease: take `take` of the window, record `spare` of it as held, give back what was held before. */
export interface LeaseWrite {
  key: CountedKey;
  windows: Windows;
  nowSeconds: number;
  /** The minute the lease is of (the item's, when another instance's clock started it a few ms early). */
  minuteStart: number;
  shape: LeaseShape;
  /** The instance's id and its own sequence number: a repeated or late write of the same lease applies once. */
  instanceId: string;
  seq: number;
  /** Allowance taken (the asking request's 1 and the spare). */
  take: number;
  spare: number;
  /** Spare this instance was recorded to hold in this minute, now used up. */
  releaseSpare: number;
  /** Allowance of ended minutes this instance never used, given back to the day. */
  returnDay: number;
  limits: PlanLimits;
  spareCap: number;
}

/** The counter store the limiter needs (implemented in rate-limit/counters.ts): reads and writes, no decisions. */
export interface RateCounters {
  /** The key's item of the window's day, read strongly consistent (`instanceId` picks the sequence number reported). */
  read(key: CountedKey, windows: Windows, instanceId: string): Promise<CounterItemState>;
  /** Writes a lease unless its conditions fail; either way, the item as it is after. */
  lease(write: LeaseWrite): Promise<{ applied: boolean; state: CounterItemState }>;
  /** Adds `refusals` refused requests to this minute's (once per batchId) and returns the minute's refusals so far. */
  countRefusals(customerId: string, windows: Windows, refusals: number, batchId: string): Promise<number>;
  /** Suspends the counters' keys until `until` (Unix seconds): on the day's item, and the next day's if the ban reaches it. */
  suspend(customerId: string, windows: Windows, until: number): Promise<void>;
}

export interface RateLimitDecision extends Verdict {
  /** Takes back this request's charge: for a request answered 503 (docs/clients.md, "Counting: each request once"). */
  refund(): Promise<boolean>;
}

type Refusal = 'minute_exhausted' | 'day_exhausted' | 'suspended';

/**
 * What this instance holds of a customer's minute: the allowance its leases
 * were granted on the customer's counter item and it has not served yet
 * (`unused`), and the spare its last write recorded there (`recordedSpare`).
 * Beside it, KeyMemory.dayReturn: allowance of the day's ended minutes it never
 * served, owed back to the day with its next write.
 *
 * The invariant, for every customer and day, over all instances:
 *   item.dayGranted = requests served (not given back as 503s)
 *                     + Σ unused + Σ dayReturn + what instances gone idle held;
 *   item.minuteGranted ≤ the minute's limit, so requests served ≤ the limit.
 * Every change of `unused`, `recordedSpare` or `dayReturn` below keeps it:
 * serving takes one from `unused`; a lease write adds what it granted; a
 * give-back moves what it gives from here to the item in the same write;
 * a minute's end moves `unused` to `dayReturn`.
 */
interface HeldLease {
  minuteStart: number;
  unused: number;
  /** The spare its write recorded on the item. */
  recordedSpare: number;
}

/** What one instance knows of one set of counters. */
interface KeyMemory {
  /** The customer's limits: as the counters last said (a plan change the authorizer's cache does not show yet), else the caller's. */
  limits: PlanLimits;
  lease: HeldLease;
  /** Allowance of ended minutes of `day` this instance never used: given back with its next lease. */
  dayReturn: { day: string; count: number };
  recent: RecentRequests;
  /** The item as last read or written. */
  seen?: CounterItemState;
  /** The minute (Unix seconds) and day seen used up. */
  exhaustedMinute: number;
  exhaustedDay: string;
  suspendedUntil: number;
  /** Refusals of `minuteStart`: recorded on the counters (as last seen), and answered here since. */
  refusals: { minuteStart: number; recorded: number; unrecorded: number };
  /** This key's decisions on this instance, one after another (as a Lambda instance serves one request at a time). */
  queue: Promise<unknown>;
}

/** Counters remembered per instance; the oldest is forgotten beyond this. */
const MEMORY_KEYS = 10_000;
/** Writes of one lease: each failed one taught the limiter something (a minute, a plan, a smaller room); the bound guards against a bug. */
const MAX_LEASE_WRITES = 6;

const noRefund = async () => false;

/**
 * Counts the requests of keys and decides: serve (with the headers), refuse
 * with 429, or 401 when the key was revoked or expired since the authorizer's
 * answer was cached. One per instance:
 *
 * - It leases allowance from the key's counter item (one conditional write)
 *   and serves from it in memory (rate-limit/allowance.ts sizes the leases); a quiet
 *   key is counted request by request. A request served from memory reads the
 *   item once (no write), so a revocation, expiry, plan change or ban shows at
 *   the key's next request. A 503's charge goes back to the lease.
 * - A window seen used up refuses with no write (one read, for the same reason),
 *   until that read shows room given back (learnRoom).
 * - At the window's end (rate-limit/allowance.ts, windowEnding) every request is
 *   counted on the item, and what an instance still holds goes back with the
 *   key's next request it serves (giveBackHeld).
 * - It counts and remembers by the counters' id, so the keys of a rotation
 *   share one memory as they share one set of counters.
 * - The ban rule (decision 9) counts every refusal: each instance records the
 *   refusals it answered in batches (refusalBatch) and at once when the
 *   threshold may be reached. A refusal already decided stays a 429 when its
 *   bookkeeping fails: `warn` hears of it.
 */
export class RateLimiter {
  private readonly memory = new Map<string, KeyMemory>();
  private readonly instanceId: string;
  private seq = 0;

  constructor(
    private readonly counters: RateCounters,
    private readonly warn: (message: string, error: unknown) => void = () => {},
    options: { instanceId?: string } = {},
  ) {
    this.instanceId = options.instanceId ?? globalThis.crypto.randomUUID().slice(0, 12);
  }

  /** Whether this instance already knows the request will be refused: no other work need start for it. */
  knowsRefusal(customerId: string, callerLimits: PlanLimits, nowMs: number): boolean {
    const memory = this.memoryOf(customerId, callerLimits, nowMs);
    const windows = windowsAt(nowMs);
    forgetEndedWindows(memory, windows);
    return rememberedRefusal(memory, windows, nowMs) !== undefined;
  }

  enforce(key: CountedKey, callerLimits: PlanLimits, nowMs: number): Promise<RateLimitDecision> {
    const memory = this.memoryOf(key.customerId, callerLimits, nowMs);
    return this.enqueue(memory, () => this.decide(key, memory, nowMs));
  }

  private async decide(key: CountedKey, memory: KeyMemory, nowMs: number): Promise<RateLimitDecision> {
    const windows = windowsAt(nowMs);
    forgetEndedWindows(memory, windows);
    if (memory.lease.unused > 0 || rememberedRefusal(memory, windows, nowMs)) {
      // Served from memory or refused from memory: the key's state as the key tool left it, read once.
      const state = await this.counters.read(key, windows, this.instanceId);
      memory.seen = state;
      learnKeyState(state, memory, windows, nowMs);
      learnRoom(state, memory, windows);
      const known = rememberedRefusal(memory, windows, nowMs);
      if (known) return { ...(await this.refuse(known, key.customerId, memory, windows, nowMs)), refund: noRefund };
      if (memory.lease.unused > 0 && state.minuteStart === memory.lease.minuteStart) {
        if (!servedUpToLimits(state, memory)) {
          const decision = this.serve(key, memory, state, windows, nowMs);
          if (windowEnding(whatIsLeft(state, memory))) await this.giveBackHeld(key, memory, windows, nowMs);
          return decision;
        }
        // Limits lowered under what was granted: what is held goes back to the day with the next lease.
        memory.dayReturn.count += memory.lease.unused;
        memory.lease.unused = 0;
      }
    }
    return this.leaseAndServe(key, memory, windows, nowMs);
  }

  /** Leases allowance with one conditional write (more when the item taught it something) and serves the request from it. */
  private async leaseAndServe(key: CountedKey, memory: KeyMemory, windows: Windows, nowMs: number): Promise<RateLimitDecision> {
    for (let attempt = 0; attempt < MAX_LEASE_WRITES; attempt++) {
      const write = leaseWriteFor(key, memory, windows, nowMs, this.instanceId, ++this.seq);
      const { applied, state } = await this.sendLease(write, memory);
      memory.seen = state;
      if (applied) {
        memory.lease = { minuteStart: write.minuteStart, unused: write.take, recordedSpare: write.spare };
        return this.serve(key, memory, state, windows, nowMs);
      }
      learnKeyState(state, memory, windows, nowMs);
      learnExhaustion(state, memory, windows);
      const refusal = rememberedRefusal(memory, windows, nowMs);
      if (refusal) return { ...(await this.refuse(refusal, key.customerId, memory, windows, nowMs)), refund: noRefund };
    }
    throw new Error('Rate-limit counter kept changing under us');
  }

  /**
   * One lease write. What it gives back counts as given back whatever happens
   * (so it is never given twice); when the write fails, one read tells whether
   * it landed, so a lease that landed is held rather than lost.
   */
  private async sendLease(write: LeaseWrite, memory: KeyMemory): Promise<{ applied: boolean; state: CounterItemState }> {
    const before = { dayReturn: memory.dayReturn.count, recordedSpare: memory.lease.recordedSpare };
    memory.dayReturn.count -= write.returnDay;
    memory.lease = { minuteStart: write.minuteStart, unused: 0, recordedSpare: 0 };
    try {
      const result = await this.counters.lease(write);
      const applied = result.applied || landed(result.state, write);
      if (!applied) {
        // Refused by its condition: nothing was given back, so it is still to give.
        memory.dayReturn.count = before.dayReturn;
        if (write.releaseSpare > 0) memory.lease.recordedSpare = before.recordedSpare;
      }
      return { applied, state: result.state };
    } catch (error) {
      const state = await this.counters.read(write.key, write.windows, this.instanceId).catch(() => undefined);
      if (state && landed(state, write)) memory.lease = { minuteStart: write.minuteStart, unused: write.take, recordedSpare: write.spare };
      throw error;
    }
  }

  /** Serves one request from the lease; its headers count what the item granted less what this instance still holds. */
  private serve(key: CountedKey, memory: KeyMemory, state: CounterItemState, windows: Windows, nowMs: number): RateLimitDecision {
    const lease = memory.lease;
    lease.unused -= 1;
    memory.recent.record(nowMs);
    const minuteUsed = state.minuteGranted - lease.unused;
    const dayUsed = state.dayGranted - lease.unused - memory.dayReturn.count;
    const refund = () => this.enqueue(memory, () => this.giveBack(key, memory, lease, windows, nowMs));
    return { ...countedVerdict(memory.limits, windows, minuteUsed, dayUsed), refund };
  }

  /**
   * Takes back a 503's charge: gives its allowance back to the item (a lease
   * of -1, so every instance's X-RateLimit-Remaining shows it), or, when that
   * write fails, holds it for this instance's next request. Once its minute
   * has ended, it goes back to the day with the next lease.
   */
  private async giveBack(key: CountedKey, memory: KeyMemory, lease: HeldLease, windows: Windows, nowMs: number): Promise<boolean> {
    if (memory.lease !== lease || lease.minuteStart === 0) {
      if (memory.dayReturn.day === windows.day) memory.dayReturn.count += 1;
      return true;
    }
    const write = this.givingBack(key, memory, lease, windows, nowMs, { minute: 1, recordedSpare: 0, day: 0 });
    const given = await this.counters
      .lease(write)
      .then(({ applied, state }) => applied || landed(state, write))
      .catch(() => this.counters.read(key, windows, this.instanceId).then((state) => landed(state, write) || undefined));
    // Unknown (both calls failed): neither given nor held, so never served twice.
    if (given === false && memory.lease === lease) lease.unused += 1;
    return given !== undefined || memory.lease === lease;
  }

  /**
   * At the window's end (rate-limit/allowance.ts, windowEnding), gives back what
   * this instance still holds, of the minute and of ended minutes, with one
   * lease write: the instances still serving the key are granted it, so the key
   * is refused only when nothing is left. A failed write keeps it held; an
   * unknown outcome drops it (never served twice).
   */
  private async giveBackHeld(key: CountedKey, memory: KeyMemory, windows: Windows, nowMs: number): Promise<void> {
    const lease = memory.lease;
    const held = { unused: lease.unused, recordedSpare: lease.recordedSpare, dayReturn: memory.dayReturn.count };
    if (held.unused === 0 && held.dayReturn === 0) return;
    const write = this.givingBack(key, memory, lease, windows, nowMs, {
      minute: held.unused,
      recordedSpare: held.recordedSpare,
      day: memory.dayReturn.day === windows.day ? held.dayReturn : 0,
    });
    lease.unused = 0;
    lease.recordedSpare = 0;
    memory.dayReturn.count -= write.returnDay;
    let given: boolean | undefined;
    try {
      const { applied, state } = await this.counters.lease(write);
      memory.seen = state;
      given = applied || landed(state, write);
    } catch (error) {
      // Unknown whether it landed (a late attempt may still): held by no one, so never served twice.
      this.warn('rate-limit allowance not given back', error);
    }
    if (given === false && memory.lease === lease) {
      lease.unused += held.unused;
      lease.recordedSpare = held.recordedSpare;
      memory.dayReturn.count += write.returnDay;
    }
  }

  /** The lease write that gives allowance back to the lease's minute (a negative take), its recorded spare and the day's. */
  private givingBack(
    key: CountedKey,
    memory: KeyMemory,
    lease: HeldLease,
    windows: Windows,
    nowMs: number,
    back: { minute: number; recordedSpare: number; day: number },
  ): LeaseWrite {
    return {
      ...leaseWriteFor(key, memory, windows, nowMs, this.instanceId, ++this.seq),
      minuteStart: lease.minuteStart,
      shape: 'same_minute',
      take: -back.minute,
      spare: 0,
      releaseSpare: back.recordedSpare,
      returnDay: back.day,
    };
  }

  private enqueue<T>(memory: KeyMemory, work: () => Promise<T>): Promise<T> {
    const done = memory.queue.then(work);
    memory.queue = done.catch(() => undefined);
    return done;
  }

  /** A refused request's verdict; it counts toward the ban of the counters' keys (unless they are suspended already). */
  private async refuse(refusal: Refusal, customerId: string, memory: KeyMemory, windows: Windows, nowMs: number): Promise<Verdict> {
    const { limits, refusals } = memory;
    if (refusal === 'suspended') return refusedVerdict('suspended', limits, windows, nowMs, memory.suspendedUntil);
    refusals.unrecorded += 1;
    const threshold = banThreshold(limits);
    if (refusals.unrecorded < refusalBatch(limits) && refusals.recorded + refusals.unrecorded < threshold) {
      return refusedVerdict(refusal, limits, windows, nowMs);
    }
    const recorded = await this.recordRefusals(customerId, memory, windows);
    if (recorded < threshold) return refusedVerdict(refusal, limits, windows, nowMs);
    const until = Math.floor(nowMs / 1000) + BAN_DURATION_SECONDS;
    try {
      await this.counters.suspend(customerId, windows, until);
    } catch (error) {
      // The next refusal recorded tries again.
      this.warn('rate-limit suspension not written', error);
      return refusedVerdict(refusal, limits, windows, nowMs);
    }
    memory.suspendedUntil = until;
    return refusedVerdict('suspended', limits, windows, nowMs, until);
  }

  /** Writes the refusals answered here since the last batch; returns the minute's refusals as recorded (or as last known). */
  private async recordRefusals(customerId: string, memory: KeyMemory, windows: Windows): Promise<number> {
    const refusals = memory.refusals;
    // Taken before the write: requests refused meanwhile start the next batch.
    const batch = refusals.unrecorded;
    refusals.unrecorded = 0;
    try {
      const batchId = `${this.instanceId}.${++this.seq}`;
      refusals.recorded = Math.max(refusals.recorded, await this.counters.countRefusals(customerId, windows, batch, batchId));
    } catch (error) {
      // Kept for the next batch; this request's answer is decided already.
      refusals.unrecorded += batch;
      this.warn('rate-limit refusals not recorded', error);
      return 0;
    }
    return refusals.recorded;
  }

  /**
   * The customer's memory, its limits brought up to date: the counters' copy of
   * a plan change while it holds for today, else the caller's (the authorizer
   * reads the customer's record). A change of limits keeps what is held: the
   * item counts it, and serving stops at the new limits (servedUpToLimits).
   */
  private memoryOf(customerId: string, callerLimits: PlanLimits, nowMs: number): KeyMemory {
    let memory = this.memory.get(customerId);
    if (!memory) {
      memory = freshMemory(callerLimits);
      this.memory.set(customerId, memory);
      if (this.memory.size > MEMORY_KEYS) this.memory.delete(this.memory.keys().next().value as string);
    }
    const copied = memory.seen?.day === windowsAt(nowMs).day ? memory.seen.keyLimits : undefined;
    changeLimits(memory, copied ?? callerLimits);
    return memory;
  }
}

function freshMemory(limits: PlanLimits): KeyMemory {
  return {
    limits,
    lease: { minuteStart: 0, unused: 0, recordedSpare: 0 },
    dayReturn: { day: '', count: 0 },
    recent: new RecentRequests(),
    exhaustedMinute: 0,
    exhaustedDay: '',
    suspendedUntil: 0,
    refusals: { minuteStart: 0, recorded: 0, unrecorded: 0 },
    queue: Promise.resolve(),
  };
}

/** What is left of the windows as the item shows it and this instance counts it (what it is to give back to the day included). */
function whatIsLeft(state: CounterItemState, memory: KeyMemory): WhatIsLeft {
  const { limits } = memory;
  return {
    minuteLeft: limits.perMinute - state.minuteGranted,
    dayLeft: limits.perDay - state.dayGranted + memory.dayReturn.count,
    instances: Math.max(1, state.leaseHolders),
  };
}

/** Whether the item shows this lease applied: our own write, landed on an attempt whose answer was lost. */
function landed(state: CounterItemState, write: LeaseWrite): boolean {
  return state.minuteStart === write.minuteStart && state.leaseSeq === write.seq;
}

/** The next lease write, sized from the item as last seen (a stale view only costs a failed write, which shows the item as it is). */
function leaseWriteFor(key: CountedKey, memory: KeyMemory, windows: Windows, nowMs: number, instanceId: string, seq: number): LeaseWrite {
  const seen = memory.seen?.day === windows.day ? memory.seen : undefined;
  const minuteStart = Math.max(windows.minuteStart, seen?.minuteStart ?? 0);
  const shape = shapeFor(seen, minuteStart);
  const { limits } = memory;
  const releaseSpare = memory.lease.minuteStart === minuteStart ? memory.lease.recordedSpare : 0;
  const returnDay = memory.dayReturn.day === windows.day ? memory.dayReturn.count : 0;
  const cap = spareCap(limits);
  const item =
    shape === 'new_minute' ? { minuteGranted: 0, spare: 0 } : { minuteGranted: seen?.minuteGranted ?? 0, spare: seen?.spare ?? 0 };
  const spare = leaseSpare({
    limits,
    recentRequests: memory.recent.countAt(nowMs),
    msLeftInMinute: (minuteStart + 60) * 1000 - nowMs,
    minuteLeft: limits.perMinute - item.minuteGranted,
    dayLeft: limits.perDay - (seen?.dayGranted ?? 0) + returnDay,
    spareRoom: cap - item.spare + releaseSpare,
    instances: shape === 'new_minute' ? 1 : Math.max(1, seen?.leaseHolders ?? 1) + (seen?.leaseSeq === undefined ? 1 : 0),
  });
  const nowSeconds = Math.floor(nowMs / 1000);
  return {
    key,
    windows,
    nowSeconds,
    minuteStart,
    shape,
    instanceId,
    seq,
    take: 1 + spare,
    spare,
    releaseSpare,
    returnDay,
    limits,
    spareCap: cap,
  };
}

/** How the write reaches the minute. Never seen (an instance's first request of the key today): guess the key is busy and another instance started the minute. */
function shapeFor(seen: CounterItemState | undefined, minuteStart: number): LeaseShape {
  if (!seen) return 'same_minute';
  return seen.minuteStart < minuteStart ? 'new_minute' : 'same_minute';
}

/** Applies what the item says of the key: revoked or expired (401), a plan changed by the key tool, a ban. */
function learnKeyState(state: CounterItemState, memory: KeyMemory, windows: Windows, nowMs: number): void {
  const nowSeconds = Math.floor(nowMs / 1000);
  if (state.keyRevoked || (state.keyExpiresAt !== undefined && state.keyExpiresAt <= nowSeconds)) {
    throw new ApiError('unauthorized', 'This API key was revoked or has expired.');
  }
  if (state.keyLimits) changeLimits(memory, state.keyLimits);
  memory.suspendedUntil = Math.max(memory.suspendedUntil, state.suspendedUntil);
  if (state.refusedMinute === windows.minuteStart) memory.refusals.recorded = Math.max(memory.refusals.recorded, state.refusedCount);
}

/**
 * Moves the memory to new limits (a plan change). What this instance holds
 * stays held: the item counts it as granted, so dropping it would lose it to
 * the minute and the day; a window seen used up is looked at again.
 */
function changeLimits(memory: KeyMemory, limits: PlanLimits): void {
  if (limits.perMinute === memory.limits.perMinute && limits.perDay === memory.limits.perDay) return;
  memory.exhaustedMinute = 0;
  memory.exhaustedDay = '';
  memory.limits = limits;
}

/**
 * Whether the customer has been served all its limits allow, as the item and
 * this instance count it (granted, less what this instance holds): only after
 * a plan lowered the limits under what was granted, since a grant never takes
 * a window past its limit. Then what is held is served no more.
 */
function servedUpToLimits(state: CounterItemState, memory: KeyMemory): boolean {
  const left = whatIsLeft(state, memory);
  return left.minuteLeft + memory.lease.unused < 1 || left.dayLeft + memory.lease.unused < 1;
}

/** Remembers a window the item shows used up for one more request (what a failed lease write means when nothing else explains it). */
function learnExhaustion(state: CounterItemState, memory: KeyMemory, windows: Windows): void {
  if (state.day !== windows.day) return;
  const { limits } = memory;
  const returnDay = memory.dayReturn.day === windows.day ? memory.dayReturn.count : 0;
  if (limits.perDay - state.dayGranted + returnDay < 1) memory.exhaustedDay = windows.day;
  else if (state.minuteStart >= windows.minuteStart && limits.perMinute - state.minuteGranted < 1) {
    memory.exhaustedMinute = state.minuteStart;
  }
}

/** Forgets a window seen used up once the item shows room in it again (allowance given back at the window's end, or a 503's). */
function learnRoom(state: CounterItemState, memory: KeyMemory, windows: Windows): void {
  if (state.day !== windows.day) return;
  const left = whatIsLeft(state, memory);
  if (memory.exhaustedDay === windows.day && left.dayLeft >= 1) memory.exhaustedDay = '';
  if (memory.exhaustedMinute === state.minuteStart && left.minuteLeft >= 1) memory.exhaustedMinute = 0;
}

/** Moves the memory to the current windows: a lease of an ended minute gives its unused allowance back to its day. */
function forgetEndedWindows(memory: KeyMemory, windows: Windows): void {
  const { lease } = memory;
  if (memory.dayReturn.day !== windows.day) memory.dayReturn = { day: windows.day, count: 0 };
  if (lease.minuteStart < windows.minuteStart && (lease.unused > 0 || lease.recordedSpare > 0)) {
    if (lease.minuteStart >= windows.minuteStart - secondsIntoDay(windows)) memory.dayReturn.count += lease.unused;
    memory.lease = { minuteStart: 0, unused: 0, recordedSpare: 0 };
  }
  if (memory.refusals.minuteStart !== windows.minuteStart)
    memory.refusals = { minuteStart: windows.minuteStart, recorded: 0, unrecorded: 0 };
}

function secondsIntoDay(windows: Windows): number {
  return windows.minuteStart - (windows.dayEnd - 86_400);
}

/** The refusal this instance already knows of, if any. */
function rememberedRefusal(memory: KeyMemory, windows: Windows, nowMs: number): Refusal | undefined {
  if (memory.suspendedUntil > nowMs / 1000) return 'suspended';
  if (memory.exhaustedDay === windows.day) return 'day_exhausted';
  if (memory.exhaustedMinute >= windows.minuteStart && memory.lease.unused === 0) return 'minute_exhausted';
  return undefined;
}
