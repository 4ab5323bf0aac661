import type { PlanLimits } from '../../definitions/plans';
import { ApiError } from './errors';
import {
  BAN_DURATION_SECONDS,
  banThreshold,
  type CountOutcome,
  countedVerdict,
  counterShards,
  keyCounts,
  refusalBatch,
  refusedVerdict,
  shardAllowance,
  type Verdict,
  type Windows,
  windowsAt,
} from './rate-limit';

/**
 * A caller as the limiter counts it: the key it came with (whose revocation or
 * expiry refuses it) and whose counters it counts on (api-keys.ts,
 * countersIdOf). The keys of a rotation share their counters: one set of
 * limits, refusals and bans for the customer, whichever secret it sends.
 */
export interface CountedKey {
  keyId: string;
  countersId: string;
}

/**
 * The counter store the limiter needs (implemented in data/rate-limit-repository.ts).
 * Every write carries the id of the request it is for, so that a write the SDK
 * repeats, or one that lands late, is applied once.
 */
export interface RateCounters {
  /** Counts one request on one shard of the key's counters unless refused; `requestId` marks the write. */
  count(request: {
    keyId: string;
    countersId: string;
    shard: number;
    limits: PlanLimits;
    allowance: PlanLimits;
    windows: Windows;
    nowMs: number;
    requestId: string;
  }): Promise<CountOutcome>;
  /** Adds `refusals` refused requests to this minute's (once per batchId) and returns the minute's refusals so far. */
  countRefusals(countersId: string, windows: Windows, refusals: number, batchId: string): Promise<number>;
  suspend(countersId: string, shards: number, windows: Windows, until: number): Promise<void>;
  /**
   * Takes back the charge of `requestId` on the shard that counted it, if it
   * was counted there this minute (so also when it is unknown whether the
   * count landed). Returns whether it did.
   */
  refund(countersId: string, shard: number, windows: Windows, requestId: string): Promise<boolean>;
  /** What the key tool and the ban rule wrote onto the key's counters (shard 0 of the day): read, never written. */
  keyState(key: CountedKey, windows: Windows, nowMs: number): Promise<KeyState>;
}

/** The key's state as its counters hold it: limits the key tool set (if it changed the plan), usability, a ban. */
export interface KeyState {
  /** False once the key was revoked or expired (its own marks). */
  usable: boolean;
  limits?: PlanLimits;
  /** Unix seconds; 0 when not suspended. */
  suspendedUntil: number;
}

export interface RateLimitDecision extends Verdict {
  /** Takes back this request's charge: for a request answered 503 (docs/clients.md, "Counting: each request once"). */
  refund(): Promise<boolean>;
}

type Refusal = 'minute_exhausted' | 'day_exhausted' | 'suspended';

/** What one instance knows of one set of counters' windows: refusals it need not ask DynamoDB about. */
interface KeyMemory {
  /** The caller's limits (from the authorizer) this was learnt under: a change forgets everything. */
  callerLimits: string;
  /** The key's limits as the counters last said (a plan change the authorizer's cache does not show yet). */
  limits: PlanLimits;
  minuteStart: number;
  /** Shards seen with their minute used up, in `minuteStart`. */
  minuteExhausted: Set<number>;
  day: string;
  /** Shards seen with their day used up, on `day`. */
  dayExhausted: Set<number>;
  suspendedUntil: number;
  /** Refusals of `minuteStart`: those recorded on the counters (as last seen) and those this instance answered since. */
  refusals: { recorded: number; unrecorded: number };
}

/** Counters remembered per instance; the oldest is forgotten beyond this (about 300 bytes each). */
const MEMORY_KEYS = 10_000;
/** Plan changes followed within one request: more would mean the key tool is changing the plan continuously. */
const MAX_PLAN_CHANGES = 3;

/**
 * Counts the requests of keys and decides: serve (with the headers) or refuse
 * with 429, or 401 when the key was revoked or expired since the authorizer's
 * answer was cached. One per instance (it remembers windows it has seen used
 * up, so that refused requests cost no write):
 *
 * - It counts and remembers by the counters' id, so the keys of a rotation
 *   share one memory as they share one set of counters.
 * - A window seen exhausted stays so until it resets: counts only rise within
 *   a window (a refund of a 503 lowers one, and its slot then stays unused on
 *   this instance until the window ends). The memory is forgotten when the
 *   key's limits change.
 * - A key with more than one shard (counterShards) is counted on a shard
 *   chosen at random, then on the next ones while shards refuse: its requests
 *   spread over the shards, and it gets exactly its limit, the sum of theirs.
 * - The ban rule (decision 9) still counts every refusal: each instance
 *   records the refusals it answered in batches (refusalBatch, a tenth of the
 *   threshold) and at once when the threshold may be reached, so one instance
 *   suspends at exactly the threshold-th refusal, and several instances within
 *   one batch each of it.
 * - A refusal already decided stays a 429 when its bookkeeping (recording the
 *   refusals, suspending) fails: `warn` hears of the failure.
 */
export class RateLimiter {
  private readonly memory = new Map<string, KeyMemory>();

  constructor(
    private readonly counters: RateCounters,
    private readonly warn: (message: string, error: unknown) => void = () => {},
    private readonly random: () => number = Math.random,
  ) {}

  /** Whether this instance already knows the request will be refused: no other work need start for it. */
  knowsRefusal(countersId: string, callerLimits: PlanLimits, nowMs: number): boolean {
    const memory = this.memoryOf(countersId, callerLimits);
    return rememberedRefusal(memory, windowsAt(nowMs), nowMs) !== undefined;
  }

  async enforce(key: CountedKey, callerLimits: PlanLimits, nowMs: number, requestId: string): Promise<RateLimitDecision> {
    const { keyId, countersId } = key;
    const windows = windowsAt(nowMs);
    const memory = this.memoryOf(countersId, callerLimits);
    const noRefund = async () => false;
    for (let planChanges = 0; planChanges <= MAX_PLAN_CHANGES; planChanges++) {
      const known = await this.confirmedRefusal(key, memory, windows, nowMs);
      if (known) return { ...(await this.refuse(known, countersId, memory, windows, nowMs, requestId)), refund: noRefund };
      const limits = memory.limits;
      const shards = counterShards(limits);
      const first = Math.floor(this.random() * shards);
      let planChanged = false;
      for (let step = 0; step < shards && !planChanged; step++) {
        const shard = (first + step) % shards;
        if (memory.dayExhausted.has(shard) || memory.minuteExhausted.has(shard)) continue;
        const allowance = shardAllowance(limits, shards, shard);
        const refund = () => this.counters.refund(countersId, shard, windows, requestId);
        let outcome: CountOutcome;
        try {
          outcome = await this.counters.count({ keyId, countersId, shard, limits, allowance, windows, nowMs, requestId });
        } catch (error) {
          // Whether the count landed is unknown: take it back if it did.
          await refund().catch(() => false);
          throw error;
        }
        switch (outcome.kind) {
          case 'counted': {
            const counts = keyCounts(limits, shards, allowance, outcome);
            return { ...countedVerdict(limits, windows, counts.minuteCount, counts.dayCount), refund };
          }
          case 'key_unusable':
            throw new ApiError('unauthorized', 'This API key was revoked or has expired.');
          case 'plan_changed':
            forgetWindows(memory, windows);
            memory.limits = outcome.limits;
            planChanged = true;
            break;
          case 'suspended':
            memory.suspendedUntil = outcome.until;
            break;
          case 'day_exhausted':
          case 'minute_exhausted':
            (outcome.kind === 'day_exhausted' ? memory.dayExhausted : memory.minuteExhausted).add(shard);
            if (outcome.refusals !== undefined) memory.refusals.recorded = Math.max(memory.refusals.recorded, outcome.refusals);
            break;
        }
        if (memory.suspendedUntil > nowMs / 1000) break;
      }
      if (!planChanged) {
        // Every shard refused: the window is used up (or the key suspended).
        const refusal = rememberedRefusal(memory, windows, nowMs) ?? 'minute_exhausted';
        return { ...(await this.refuse(refusal, countersId, memory, windows, nowMs, requestId)), refund: noRefund };
      }
    }
    throw new Error('The key plan kept changing under us');
  }

  /**
   * A refusal this instance remembers, once one read of the counters confirms
   * the key state it stands on: the key tool may have revoked the key or
   * changed its plan since (a changed plan forgets the remembered windows, so
   * the request is counted under the new limits), so every answer, a ban's
   * 429s included, carries the key's current limits. A read, never a write.
   */
  private async confirmedRefusal(key: CountedKey, memory: KeyMemory, windows: Windows, nowMs: number): Promise<Refusal | undefined> {
    if (!rememberedRefusal(memory, windows, nowMs)) return undefined;
    const state = await this.counters.keyState(key, windows, nowMs);
    if (!state.usable) throw new ApiError('unauthorized', 'This API key was revoked or has expired.');
    if (state.limits && (state.limits.perMinute !== memory.limits.perMinute || state.limits.perDay !== memory.limits.perDay)) {
      forgetWindows(memory, windows);
      memory.limits = state.limits;
    }
    memory.suspendedUntil = Math.max(memory.suspendedUntil, state.suspendedUntil);
    return rememberedRefusal(memory, windows, nowMs);
  }

  /** A refused request's verdict; it counts toward the ban of the counters' keys (unless they are suspended already). */
  private async refuse(
    refusal: Refusal,
    countersId: string,
    memory: KeyMemory,
    windows: Windows,
    nowMs: number,
    requestId: string,
  ): Promise<Verdict> {
    const { limits } = memory;
    if (refusal === 'suspended') return refusedVerdict('suspended', limits, windows, nowMs, memory.suspendedUntil);
    const refusals = memory.refusals;
    refusals.unrecorded += 1;
    const threshold = banThreshold(limits);
    if (refusals.unrecorded < refusalBatch(limits) && refusals.recorded + refusals.unrecorded < threshold) {
      return refusedVerdict(refusal, limits, windows, nowMs);
    }
    // Taken before the write: requests refused meanwhile start the next batch.
    const batch = refusals.unrecorded;
    refusals.unrecorded = 0;
    try {
      refusals.recorded = Math.max(refusals.recorded, await this.counters.countRefusals(countersId, windows, batch, requestId));
    } catch (error) {
      // Kept for the next batch; this request's answer is decided already.
      refusals.unrecorded += batch;
      this.warn('rate-limit refusals not recorded', error);
      return refusedVerdict(refusal, limits, windows, nowMs);
    }
    if (refusals.recorded < threshold) return refusedVerdict(refusal, limits, windows, nowMs);
    const until = Math.floor(nowMs / 1000) + BAN_DURATION_SECONDS;
    try {
      await this.counters.suspend(countersId, counterShards(limits), windows, until);
    } catch (error) {
      // The next refusal recorded tries again.
      this.warn('rate-limit suspension not written', error);
      return refusedVerdict(refusal, limits, windows, nowMs);
    }
    memory.suspendedUntil = until;
    return refusedVerdict('suspended', limits, windows, nowMs, until);
  }

  private memoryOf(countersId: string, callerLimits: PlanLimits): KeyMemory {
    const caller = `${callerLimits.perMinute}/${callerLimits.perDay}`;
    let memory = this.memory.get(countersId);
    if (!memory || memory.callerLimits !== caller) {
      memory = {
        callerLimits: caller,
        limits: callerLimits,
        minuteStart: 0,
        minuteExhausted: new Set(),
        day: '',
        dayExhausted: new Set(),
        suspendedUntil: 0,
        refusals: { recorded: 0, unrecorded: 0 },
      };
      this.memory.delete(countersId);
      this.memory.set(countersId, memory);
      if (this.memory.size > MEMORY_KEYS) this.memory.delete(this.memory.keys().next().value as string);
    }
    return memory;
  }
}

/** Brings the memory to the current windows, and says which refusal it already knows of, if any. */
function rememberedRefusal(memory: KeyMemory, windows: Windows, nowMs: number): Refusal | undefined {
  if (memory.minuteStart !== windows.minuteStart) {
    memory.minuteStart = windows.minuteStart;
    memory.minuteExhausted.clear();
    memory.refusals = { recorded: 0, unrecorded: 0 };
  }
  if (memory.day !== windows.day) {
    memory.day = windows.day;
    memory.dayExhausted.clear();
  }
  if (memory.suspendedUntil > nowMs / 1000) return 'suspended';
  const shards = counterShards(memory.limits);
  if (memory.dayExhausted.size >= shards) return 'day_exhausted';
  if (new Set([...memory.dayExhausted, ...memory.minuteExhausted]).size >= shards) return 'minute_exhausted';
  return undefined;
}

function forgetWindows(memory: KeyMemory, windows: Windows): void {
  memory.minuteExhausted.clear();
  memory.dayExhausted.clear();
  memory.minuteStart = windows.minuteStart;
  memory.day = windows.day;
}
