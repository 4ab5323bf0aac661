import type { PlanLimits } from '../../definitions/plans';
import { ApiError } from '../domain/errors';
import { Allowance, spareCap, type WriteOutcome, windowEnding } from './allowance';
import type { CountedKey, CounterItemState, LeaseTerms, LeaseWrite, RateCounters } from './counter-store';
import {
  BAN_DURATION_SECONDS,
  banThreshold,
  type Refusal,
  type Used,
  refusalBatch,
  type Verdict,
  verdictOf,
  type Windows,
  windowsAt,
} from './windows';

export interface RateLimitDecision extends Verdict {
  /** Takes back this request's charge: for a request answered 503 (docs/clients.md, "Counting: each request once"). */
  refund(): Promise<boolean>;
}

/** What the limiter decided of one request; a served one names the lease its refund goes back to. */
type Outcome = { served: Used; generation: number } | { refused: Refusal };

/** A lease write's outcome, and the item as it is after (when known); `error` when its answer was lost. */
type Sent = { outcome: 'applied' | 'refused'; state: CounterItemState } | { outcome: WriteOutcome; state?: CounterItemState; error: unknown };

/** What one instance knows of one customer. */
interface CustomerMemory {
  /** The customer's limits: as its counter item last said (a plan change the authorizer's cache does not show yet), else the caller's. */
  limits: PlanLimits;
  /** What this instance holds of the customer's windows (rate-limit/allowance.ts): the only place that counts. */
  allowance: Allowance;
  /** The counter item as last read or written. */
  seen?: CounterItemState;
  /** The minute (Unix seconds) and day seen used up. */
  exhaustedMinute: number;
  exhaustedDay: string;
  suspendedUntil: number;
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
    rollOver(memory, windows);
    return rememberedRefusal(memory, windows, nowMs) !== undefined;
  }

  enforce(key: CountedKey, callerLimits: PlanLimits, nowMs: number): Promise<RateLimitDecision> {
    const memory = this.memoryOf(key.customerId, callerLimits, nowMs);
    return this.enqueue(memory, async () => {
      const windows = windowsAt(nowMs);
      const outcome = await this.decide(key, memory, windows, nowMs);
      const verdict = verdictOf(outcome, memory.limits, windows, nowMs, memory.suspendedUntil);
      if (!('served' in outcome)) return { ...verdict, refund: noRefund };
      return { ...verdict, refund: () => this.enqueue(memory, () => this.refund(key, memory, outcome.generation, windows, nowMs)) };
    });
  }

  private async decide(key: CountedKey, memory: CustomerMemory, windows: Windows, nowMs: number): Promise<Outcome> {
    rollOver(memory, windows);
    const { allowance } = memory;
    if (allowance.spare > 0 || rememberedRefusal(memory, windows, nowMs)) {
      const state = await this.counters.read(key, windows, this.instanceId);
      learnKeyState(state, memory, windows, nowMs);
      learnRoom(state, memory, windows);
      const known = rememberedRefusal(memory, windows, nowMs);
      if (known) return this.refuse(known, key, memory, windows, nowMs);
      if (allowance.spare > 0 && state.minuteStart === allowance.minuteStart) {
        if (!servedUpToLimits(state, memory)) return this.serveFromSpare(key, memory, state, windows, nowMs);
        allowance.returnSpareToDay();
      }
    }
    return this.leaseAndServe(key, memory, windows, nowMs);
  }

  /** Serves from the spare; at the window end, gives back what is still held, so the instances still serving the customer are granted it. */
  private async serveFromSpare(
    key: CountedKey,
    memory: CustomerMemory,
    state: CounterItemState,
    windows: Windows,
    nowMs: number,
  ): Promise<Outcome> {
    const served = serve(memory, state, nowMs);
    const back = windowEnding(memory.allowance.left(state, memory.limits)) ? memory.allowance.giveBackTerms() : undefined;
    const sent = back && (await this.send(back, key, memory, windows, nowMs));
    if (sent && 'error' in sent && sent.outcome === 'unknown') this.warn('rate-limit allowance not given back', sent.error);
    return served;
  }

  /** Leases allowance with one conditional write (more when a refused write taught it something) and serves the request from it. */
  private async leaseAndServe(key: CountedKey, memory: CustomerMemory, windows: Windows, nowMs: number): Promise<Outcome> {
    for (let attempt = 0; attempt < MAX_LEASE_WRITES; attempt++) {
      const seen = memory.seen?.day === windows.day ? memory.seen : undefined;
      const terms = memory.allowance.leaseTerms(seen, memory.limits, windows, nowMs);
      const sent = await this.send(terms, key, memory, windows, nowMs);
      if ('error' in sent) throw sent.error;
      if (sent.outcome === 'applied') return serve(memory, sent.state, nowMs);
      learnKeyState(sent.state, memory, windows, nowMs);
      learnExhaustion(sent.state, memory, windows);
      const refusal = rememberedRefusal(memory, windows, nowMs);
      if (refusal) return this.refuse(refusal, key, memory, windows, nowMs);
    }
    throw new Error('Rate-limit counter kept changing under us');
  }

  /** Takes back a 503's charge (rate-limit/allowance.ts, refundTerms): true unless whether it went back is unknown. */
  private async refund(key: CountedKey, memory: CustomerMemory, generation: number, windows: Windows, nowMs: number): Promise<boolean> {
    const terms = memory.allowance.refundTerms(generation, windows.day);
    return !terms || (await this.send(terms, key, memory, windows, nowMs)).outcome !== 'unknown';
  }

  /**
   * Sends one lease write of these terms and settles the allowance by its
   * outcome. A write whose answer is lost is looked at with one read: one that
   * landed is applied; otherwise its outcome stays unknown (a late attempt may
   * still land), and what it gave back is held by no one.
   */
  private async send(terms: LeaseTerms, key: CountedKey, memory: CustomerMemory, windows: Windows, nowMs: number): Promise<Sent> {
    const { limits } = memory;
    const lease: LeaseWrite = {
      ...{ kind: 'lease', key, windows, instanceId: this.instanceId, nowSeconds: Math.floor(nowMs / 1000), seq: ++this.seq },
      ...{ limits, spareCap: spareCap(limits), ...terms },
    };
    memory.allowance.sent(terms);
    const sent = await this.counters.write(lease).then(
      ({ applied, state }): Sent => ({ outcome: applied || landed(state, lease) ? 'applied' : 'refused', state }),
      (error: unknown) => this.afterLostAnswer(lease, error),
    );
    memory.allowance.settled(terms, sent.outcome);
    if (sent.state) memory.seen = sent.state;
    return sent;
  }

  private async afterLostAnswer(lease: LeaseWrite, error: unknown): Promise<Sent> {
    const state = await this.counters.read(lease.key, lease.windows, this.instanceId).catch(() => undefined);
    return { outcome: state && landed(state, lease) ? 'applied' : 'unknown', ...(state ? { state } : {}), error };
  }

  private enqueue<T>(memory: CustomerMemory, work: () => Promise<T>): Promise<T> {
    const done = memory.queue.then(work);
    memory.queue = done.catch(() => undefined);
    return done;
  }

  /** A refused request's outcome; it counts toward the customer's ban (unless it is suspended already). */
  private async refuse(refusal: Refusal, key: CountedKey, memory: CustomerMemory, windows: Windows, nowMs: number): Promise<Outcome> {
    const { limits, refusals } = memory;
    if (refusal === 'suspended') return { refused: refusal };
    refusals.unrecorded += 1;
    const threshold = banThreshold(limits);
    if (refusals.unrecorded < refusalBatch(limits) && refusals.recorded + refusals.unrecorded < threshold) return { refused: refusal };
    if ((await this.recordRefusals(key, memory, windows)) < threshold) return { refused: refusal };
    const until = Math.floor(nowMs / 1000) + BAN_DURATION_SECONDS;
    try {
      await this.counters.write({ kind: 'suspension', key, windows, instanceId: this.instanceId, until });
    } catch (error) {
      // The next refusal recorded tries again.
      this.warn('rate-limit suspension not written', error);
      return { refused: refusal };
    }
    memory.suspendedUntil = until;
    return { refused: 'suspended' };
  }

  /** Writes the refusals answered here since the last batch; returns the minute's refusals as recorded (or as last known). */
  private async recordRefusals(key: CountedKey, memory: CustomerMemory, windows: Windows): Promise<number> {
    const refusals = memory.refusals;
    // Taken before the write: requests refused meanwhile start the next batch.
    const batch = refusals.unrecorded;
    refusals.unrecorded = 0;
    const batchId = `${this.instanceId}.${++this.seq}`;
    try {
      const { state } = await this.counters.write({ kind: 'refusals', key, windows, instanceId: this.instanceId, refusals: batch, batchId });
      refusals.recorded = Math.max(refusals.recorded, state.refusedCount);
    } catch (error) {
      // Kept for the next batch; this request's answer is decided already.
      refusals.unrecorded += batch;
      this.warn('rate-limit refusals not recorded', error);
      return 0;
    }
    return refusals.recorded;
  }

  /**
   * The customer's memory, its limits brought up to date: the counter item's
   * copy of a plan change while it holds for today, else the caller's (the
   * authorizer reads the customer's record). A change of limits keeps what is
   * held: the item counts it, and serving stops at the new limits (servedUpToLimits).
   */
  private memoryOf(customerId: string, callerLimits: PlanLimits, nowMs: number): CustomerMemory {
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

function freshMemory(limits: PlanLimits): CustomerMemory {
  return {
    limits,
    allowance: new Allowance(),
    exhaustedMinute: 0,
    exhaustedDay: '',
    suspendedUntil: 0,
    refusals: { minuteStart: 0, recorded: 0, unrecorded: 0 },
    queue: Promise.resolve(),
  };
}

/** Serves one request from the spare; its headers count what the item granted less what this instance still holds. */
function serve(memory: CustomerMemory, state: CounterItemState, nowMs: number): Outcome {
  memory.allowance.serveOne(nowMs);
  return { served: memory.allowance.used(state), generation: memory.allowance.generation };
}

/** Whether the item shows this write applied: our own, landed on an attempt whose answer was lost. */
function landed(state: CounterItemState, write: { minuteStart: number; seq: number }): boolean {
  return state.minuteStart === write.minuteStart && state.leaseSeq === write.seq;
}

/** Applies what the item says of the customer and the secret: revoked or expired (401), a plan changed by the key tool, a ban. */
function learnKeyState(state: CounterItemState, memory: CustomerMemory, windows: Windows, nowMs: number): void {
  memory.seen = state;
  const nowSeconds = Math.floor(nowMs / 1000);
  if (state.keyRevoked || (state.keyExpiresAt !== undefined && state.keyExpiresAt <= nowSeconds)) {
    throw new ApiError('unauthorized', 'This API key was revoked or has expired.');
  }
  if (state.keyLimits) changeLimits(memory, state.keyLimits);
  memory.suspendedUntil = Math.max(memory.suspendedUntil, state.suspendedUntil);
  if (state.refusedMinute === windows.minuteStart) memory.refusals.recorded = Math.max(memory.refusals.recorded, state.refusedCount);
}

/** Moves the memory to new limits (a plan change). What this instance holds stays held (the item counts it); a window seen used up is looked at again. */
function changeLimits(memory: CustomerMemory, limits: PlanLimits): void {
  if (limits.perMinute === memory.limits.perMinute && limits.perDay === memory.limits.perDay) return;
  memory.exhaustedMinute = 0;
  memory.exhaustedDay = '';
  memory.limits = limits;
}

/**
 * Whether the customer has been served all its limits allow, as the item and
 * this instance count it: only after a plan lowered the limits under what was
 * granted, since a grant never takes a window past its limit. Then what is
 * held is served no more.
 */
function servedUpToLimits(state: CounterItemState, memory: CustomerMemory): boolean {
  const { allowance } = memory;
  const left = allowance.left(state, memory.limits);
  return left.minuteLeft + allowance.spare < 1 || left.dayLeft + allowance.spare < 1;
}

/** Remembers a window the item shows used up for one more request (what a refused lease write means when nothing else explains it). */
function learnExhaustion(state: CounterItemState, memory: CustomerMemory, windows: Windows): void {
  if (state.day !== windows.day) return;
  const left = memory.allowance.left(state, memory.limits);
  if (left.dayLeft < 1) memory.exhaustedDay = windows.day;
  else if (state.minuteStart >= windows.minuteStart && left.minuteLeft < 1) memory.exhaustedMinute = state.minuteStart;
}

/** Forgets a window seen used up once the item shows room in it again (allowance given back at the window end, or a 503's). */
function learnRoom(state: CounterItemState, memory: CustomerMemory, windows: Windows): void {
  if (state.day !== windows.day) return;
  const left = memory.allowance.left(state, memory.limits);
  if (memory.exhaustedDay === windows.day && left.dayLeft >= 1) memory.exhaustedDay = '';
  if (memory.exhaustedMinute === state.minuteStart && left.minuteLeft >= 1) memory.exhaustedMinute = 0;
}

/** Moves the memory to the current windows: the allowance's, and the refusals of a new minute. */
function rollOver(memory: CustomerMemory, windows: Windows): void {
  memory.allowance.rollOver(windows);
  if (memory.refusals.minuteStart !== windows.minuteStart) memory.refusals = { minuteStart: windows.minuteStart, recorded: 0, unrecorded: 0 };
}

/** The refusal this instance already knows of, if any. */
function rememberedRefusal(memory: CustomerMemory, windows: Windows, nowMs: number): Refusal | undefined {
  if (memory.suspendedUntil > nowMs / 1000) return 'suspended';
  if (memory.exhaustedDay === windows.day) return 'day_exhausted';
  if (memory.exhaustedMinute >= windows.minuteStart && memory.allowance.spare === 0) return 'minute_exhausted';
  return undefined;
}
