import type { PlanLimits } from '../../definitions/plans';
import { appliedNothing } from '../data/dynamo-errors';
import { ApiError } from '../domain/errors';
import { Allowance, type Asking, type LeasingInstance, type Served } from './allowance';
import type { Caller, CounterItemState, CounterStore } from './counter-store';
import { rateLimitHeaders } from './headers';
import {
  BAN_DURATION_SECONDS,
  banThreshold,
  type Refusal,
  refusalBatch,
  type Verdict,
  verdictOf,
  type Windows,
  type WindowVerdict,
  windowsAt,
} from './windows';

/** A caller with the limits the authorizer found for its customer (the counter item's, after a plan change, win). */
export type LimitedCaller = Caller & { limits: PlanLimits };

/** A request counted: a served one names the lease its refund goes back to. */
type Counting = Served | { refused: Refusal };

/** What one instance knows of one customer. */
interface CustomerMemory {
  /** The customer's limits: as its counter item last said (a plan change the authorizer's cache does not show yet), else the caller's. */
  limits: PlanLimits;
  /** What this instance holds of the customer's windows, and the writes that change it (rate-limit/allowance.ts). */
  allowance: Allowance;
  /** The minute (Unix seconds) and day seen used up. */
  exhaustedMinute: number;
  exhaustedDay: string;
  bannedUntil: number;
  /** Refusals of `minuteStart`: recorded on the counters (as last seen), and answered here since. */
  refusals: { minuteStart: number; recorded: number; unrecorded: number };
  /** The customer's decisions on this instance, one after another (as a Lambda instance serves one request at a time). */
  queue: Promise<unknown>;
}

/** Customers remembered per instance; the oldest is forgotten beyond this. */
const MEMORY_KEYS = 10_000;
/** Writes of one lease: each refused one taught the limiter something (a minute, a plan, a smaller room); the bound guards against a bug. */
const MAX_LEASE_WRITES = 6;

const noRefund = async () => false;

/**
 * Counts the requests of customers and decides: serve (with the headers),
 * refuse with 429, or 401 when the secret was revoked or expired since the
 * authorizer's answer was cached. One per instance; per request it does one
 * read or one write of the customer's counter item, in this order:
 *
 * - Holding spare, or knowing a refusal (a used-up window, a suspension), it
 *   reads the item once (no write), so a revocation, expiry, plan change or
 *   ban shows at the customer's next request, and serves from the spare or
 *   refuses (until the read shows room given back). At the window end
 *   (rate-limit/allowance.ts, windowEnding) it gives back what it holds.
 * - Otherwise it leases 1 + spare with one conditional write (a quiet
 *   customer is counted request by request) and serves from it.
 * - A 503's charge goes back to the item (refund).
 * - The ban rule (decision 9) counts every refusal: each instance records the
 *   refusals it answered in batches (refusalBatch) and at once when the
 *   threshold may be reached. A refusal already decided stays a 429 when its
 *   bookkeeping fails: `warn` hears of it.
 */
export class RateLimiter {
  private readonly memory = new Map<string, CustomerMemory>();
  private readonly instance: LeasingInstance;
  private seq = 0;

  constructor(counters: CounterStore, warn: (message: string, error: unknown) => void = () => {}, options: { instanceId?: string } = {}) {
    const id = options.instanceId ?? globalThis.crypto.randomUUID().slice(0, 12);
    this.instance = { counters, id, nextSeq: () => ++this.seq, warn };
  }

  /** Whether this instance already knows the request will be refused: no other work need start for it. */
  knowsRefusal(caller: LimitedCaller, nowMs: number): boolean {
    const memory = this.memoryOf(caller.customerId, caller.limits, nowMs);
    const windows = windowsAt(nowMs);
    rollOver(memory, windows);
    return rememberedRefusal(memory, windows, nowMs) !== undefined;
  }

  /** Counts one request of the caller's customer and says what it may do. */
  admit(caller: LimitedCaller, nowMs: number): Promise<Verdict> {
    const memory = this.memoryOf(caller.customerId, caller.limits, nowMs);
    return this.enqueue(memory, async () => {
      const asking = { caller: { keyId: caller.keyId, customerId: caller.customerId }, windows: windowsAt(nowMs), nowMs };
      const counting = await this.decide(asking, memory);
      const judged = verdictOf(counting, memory.limits, asking.windows, nowMs, memory.bannedUntil);
      if (!('served' in counting)) return withHeaders(judged, noRefund);
      return withHeaders(judged, () => this.enqueue(memory, () => memory.allowance.refund(asking, counting.generation, memory.limits)));
    });
  }

  /** Refused from memory, served from the spare (each after one read), or served from a new lease. */
  private async decide(asking: Asking, memory: CustomerMemory): Promise<Counting> {
    const { caller, windows, nowMs } = asking;
    rollOver(memory, windows);
    if (memory.allowance.spare > 0 || rememberedRefusal(memory, windows, nowMs)) {
      const state = await this.instance.counters.read(caller, windows, this.instance.id);
      learn(state, memory, windows, nowMs, 'room');
      const known = rememberedRefusal(memory, windows, nowMs);
      if (known) return this.refuse(known, caller, memory, windows, nowMs);
      const served = await memory.allowance.serveFromSpare(asking, state, memory.limits);
      if (served) return served;
    }
    for (let attempt = 0; attempt < MAX_LEASE_WRITES; attempt++) {
      const leased = await memory.allowance.lease(asking, memory.limits);
      if ('served' in leased) return leased;
      learn(leased.refusedBy, memory, windows, nowMs, 'exhaustion');
      const refusal = rememberedRefusal(memory, windows, nowMs);
      if (refusal) return this.refuse(refusal, caller, memory, windows, nowMs);
    }
    throw new Error('Rate-limit counter kept changing under us');
  }

  private enqueue<T>(memory: CustomerMemory, work: () => Promise<T>): Promise<T> {
    const done = memory.queue.then(work);
    memory.queue = done.catch(() => undefined);
    return done;
  }

  /** A refused request's outcome; it counts toward the customer's ban (unless it is suspended already). */
  private async refuse(refusal: Refusal, caller: Caller, memory: CustomerMemory, windows: Windows, nowMs: number): Promise<Counting> {
    const { limits, refusals } = memory;
    if (refusal === 'banned') return { refused: refusal };
    refusals.unrecorded += 1;
    const threshold = banThreshold(limits);
    if (refusals.unrecorded < refusalBatch(limits) && refusals.recorded + refusals.unrecorded < threshold) return { refused: refusal };
    if ((await this.recordRefusals(caller, memory, windows)) < threshold) return { refused: refusal };
    const until = Math.floor(nowMs / 1000) + BAN_DURATION_SECONDS;
    try {
      await this.instance.counters.write({ kind: 'ban', caller, windows, instanceId: this.instance.id, until });
    } catch (error) {
      // The next refusal recorded tries again.
      this.instance.warn('rate-limit suspension not written', error);
      return { refused: refusal };
    }
    memory.bannedUntil = until;
    return { refused: 'banned' };
  }

  /** Writes the refusals answered here since the last batch; returns the minute's refusals as recorded (or as last known). */
  private async recordRefusals(caller: Caller, memory: CustomerMemory, windows: Windows): Promise<number> {
    const refusals = memory.refusals;
    // Taken before the write: requests refused meanwhile start the next batch.
    const batch = refusals.unrecorded;
    refusals.unrecorded = 0;
    const { counters, id } = this.instance;
    try {
      const write = {
        kind: 'refusals',
        caller,
        windows,
        instanceId: id,
        refusals: batch,
        batchId: `${id}.${this.instance.nextSeq()}`,
      } as const;
      refusals.recorded = Math.max(refusals.recorded, (await counters.write(write)).state.refusedCount);
    } catch (error) {
      // A batch DynamoDB refused ("slow down") goes with the next; one whose answer was lost may have been
      // counted, and counted twice it would ban before the N-th refusal: the ban may start a batch later
      // instead, never earlier (docs/clients.md, the ban rule).
      if (appliedNothing(error)) refusals.unrecorded += batch;
      this.instance.warn('rate-limit refusals not recorded', error);
      return 0;
    }
    return refusals.recorded;
  }

  /**
   * The customer's memory, its limits brought up to date: the counter item's
   * copy of a plan change while it holds for today, else the caller's (the
   * authorizer reads the customer's record). A change of limits keeps what is
   * held: the item counts it, and serving stops at the new limits.
   */
  private memoryOf(customerId: string, callerLimits: PlanLimits, nowMs: number): CustomerMemory {
    let memory = this.memory.get(customerId);
    if (!memory) {
      memory = freshMemory(callerLimits, new Allowance(this.instance));
      this.memory.set(customerId, memory);
      if (this.memory.size > MEMORY_KEYS) this.memory.delete(this.memory.keys().next().value as string);
    }
    const seen = memory.allowance.seen;
    changeLimits(memory, (seen?.day === windowsAt(nowMs).day ? seen.customerLimits : undefined) ?? callerLimits);
    return memory;
  }
}

function freshMemory(limits: PlanLimits, allowance: Allowance): CustomerMemory {
  return {
    limits,
    allowance,
    exhaustedMinute: 0,
    exhaustedDay: '',
    bannedUntil: 0,
    refusals: { minuteStart: 0, recorded: 0, unrecorded: 0 },
    queue: Promise.resolve(),
  };
}

/**
 * Applies what the item says: of the secret, revoked or expired (401); of the
 * customer, a plan changed by the key tool, a ban, the refusals recorded; of
 * its windows, after a read, room given back in a window seen used up (a
 * give-back at the window end, or a 503's refund), and after a refused lease,
 * a window used up.
 */
function learn(state: CounterItemState, memory: CustomerMemory, windows: Windows, nowMs: number, after: 'room' | 'exhaustion'): void {
  memory.allowance.seen = state;
  if (state.keyRevoked || (state.keyExpiresAt !== undefined && state.keyExpiresAt <= Math.floor(nowMs / 1000))) {
    throw new ApiError('unauthorized', 'This API key was revoked or has expired.');
  }
  if (state.customerLimits) changeLimits(memory, state.customerLimits);
  memory.bannedUntil = Math.max(memory.bannedUntil, state.bannedUntil);
  if (state.refusedMinute === windows.minuteStart) memory.refusals.recorded = Math.max(memory.refusals.recorded, state.refusedCount);
  if (state.day !== windows.day) return;
  const left = memory.allowance.left(state, memory.limits);
  if (after === 'room') {
    if (memory.exhaustedDay === windows.day && left.dayLeft >= 1) memory.exhaustedDay = '';
    if (memory.exhaustedMinute === state.minuteStart && left.minuteLeft >= 1) memory.exhaustedMinute = 0;
  } else if (left.dayLeft < 1) memory.exhaustedDay = windows.day;
  else if (state.minuteStart >= windows.minuteStart && left.minuteLeft < 1) memory.exhaustedMinute = state.minuteStart;
}

/** Moves the memory to new limits (a plan change). What this instance holds stays held (the item counts it); a window seen used up is looked at again. */
function changeLimits(memory: CustomerMemory, limits: PlanLimits): void {
  if (limits.perMinute === memory.limits.perMinute && limits.perDay === memory.limits.perDay) return;
  memory.exhaustedMinute = 0;
  memory.exhaustedDay = '';
  memory.limits = limits;
}

/** Moves the memory to the current windows: the allowance's, and the refusals of a new minute. */
function rollOver(memory: CustomerMemory, windows: Windows): void {
  memory.allowance.rollOver(windows);
  if (memory.refusals.minuteStart !== windows.minuteStart)
    memory.refusals = { minuteStart: windows.minuteStart, recorded: 0, unrecorded: 0 };
}

/** The refusal this instance already knows of, if any. */
function rememberedRefusal(memory: CustomerMemory, windows: Windows, nowMs: number): Refusal | undefined {
  if (memory.bannedUntil > nowMs / 1000) return 'banned';
  if (memory.exhaustedDay === windows.day) return 'day_exhausted';
  if (memory.exhaustedMinute >= windows.minuteStart && memory.allowance.spare === 0) return 'minute_exhausted';
  return undefined;
}

/** A verdict with its headers; a refund that took the charge back counts the request no more in them. */
function withHeaders(judged: WindowVerdict, takeBack: () => Promise<boolean>): Verdict {
  const headers: Record<string, string> = rateLimitHeaders(judged.window);
  const refund = async () => {
    const refunded = await takeBack();
    if (refunded) headers['X-RateLimit-Remaining'] = String(Number(headers['X-RateLimit-Remaining']) + 1);
    return refunded;
  };
  return { ...judged, headers, refund };
}
