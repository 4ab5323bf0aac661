import type { PlanLimits } from '../../definitions/plans';
import { ApiError } from './errors';

/**
 * Rate-limit rules (decisions 8 and 9): fixed UTC windows of one minute
 * and one day; headers that describe the window closest to exhaustion; a
 * temporary ban for keys that keep calling after their 429s. Pure functions:
 * the counting itself is atomic in DynamoDB (data/rate-limit-repository.ts).
 */

/** A key is suspended when it sends this many refused requests within one UTC minute… */
export function banThreshold(limits: PlanLimits): number {
  return limits.perMinute;
}
/** …for this long. */
export const BAN_DURATION_SECONDS = 15 * 60;

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export interface Windows {
  /** Unix seconds of the start of the current UTC minute. */
  minuteStart: number;
  minuteEnd: number;
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  dayEnd: number;
}

export function windowsAt(nowMs: number): Windows {
  const minuteStartMs = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
  const dayStartMs = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return {
    minuteStart: minuteStartMs / 1000,
    minuteEnd: (minuteStartMs + MINUTE_MS) / 1000,
    day: new Date(dayStartMs).toISOString().slice(0, 10),
    dayEnd: (dayStartMs + DAY_MS) / 1000,
  };
}

/** The window a response reports to its caller (the one closest to exhaustion); http/ writes it as X-RateLimit-* headers. */
export interface ReportedWindow {
  limit: number;
  remaining: number;
  /** Unix seconds at which the window ends. */
  resetSeconds: number;
}

function reportedWindow(limit: number, remaining: number, resetSeconds: number): ReportedWindow {
  return { limit, remaining: Math.max(0, remaining), resetSeconds };
}

/**
 * The most requests one counter item counts in a minute. Each item keeps the
 * ids of the requests it counted this minute (so that a write landing late is
 * recognised, data/rate-limit-repository.ts), 11 bytes each, and DynamoDB
 * charges each count's UpdateItem for the whole item: at 1,000 the item holds
 * 11,151 bytes, so a count costs at most 11 write units (one per started KB)
 * and a full minute averages about 6 per count (measured with this limiter:
 * test/integration/counter-item-size.test.ts): about 100 units a second for
 * 1,000 requests a minute spread over it. (A key that sends its whole minute in
 * one second needs about 6,000: DynamoDB throttles part of it, the SDK retries,
 * and what still fails is a 503, not charged. Keeping that under 1,000 would
 * take about 370 counts per item, and Business keys on several items.) One
 * partition takes 1,000 write units a second ("Understanding DynamoDB warm
 * throughput in different scenarios",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html:
 * "each individual partition is limited to 1,000 write units per second").
 * The largest fixed plan (Business, 1,000 a minute) fits one item, so every
 * fixed plan is counted on one item and its X-RateLimit-Remaining is exact.
 */
export const MAX_COUNTS_PER_ITEM_PER_MINUTE = 1_000;
/**
 * At most this many items per key and day: the key tool copies a key's state
 * onto every item of today and tomorrow, plus two key records, in one
 * TransactWriteItems of at most 100 actions. Keys above 48,000 a minute get
 * more than MAX_COUNTS_PER_ITEM_PER_MINUTE per item.
 */
export const MAX_COUNTER_SHARDS = 48;

/** How many counter items (shards) count a key with these limits. */
export function counterShards(limits: PlanLimits): number {
  return Math.min(MAX_COUNTER_SHARDS, Math.max(1, Math.ceil(limits.perMinute / MAX_COUNTS_PER_ITEM_PER_MINUTE)));
}

/** Shard `index`'s part of the limits: the parts add up exactly to the key's limits. */
export function shardAllowance(limits: PlanLimits, shards: number, index: number): PlanLimits {
  const share = (total: number) => Math.floor(total / shards) + (index < total % shards ? 1 : 0);
  return { perMinute: share(limits.perMinute), perDay: share(limits.perDay) };
}

/**
 * What one counter item said about one request. `limits` are the key's limits
 * that applied: the caller's, unless the key tool changed the plan since the
 * authorizer's answer was cached (then `plan_changed` carries the new ones).
 * A refusal carries the refusals recorded on the item this minute, when it knows them.
 */
export type CountOutcome = { limits: PlanLimits } & (
  | { kind: 'counted'; minuteCount: number; dayCount: number }
  | { kind: 'minute_exhausted'; refusals?: number }
  | { kind: 'day_exhausted'; refusals?: number }
  | { kind: 'suspended'; until: number }
  /** Revoked, or rotated and past its grace: the key tool said so since the authorizer's answer was cached. */
  | { kind: 'key_unusable' }
  | { kind: 'plan_changed' }
);

/** Refusals an instance answers before it records them for the ban rule (decision 9): a tenth of the threshold, at least 1. */
export function refusalBatch(limits: PlanLimits): number {
  return Math.max(1, Math.ceil(banThreshold(limits) / 10));
}

export interface Verdict {
  window: ReportedWindow;
  /** Set when the request is refused: a 429 to send instead of serving it. */
  refusal?: ApiError;
}

/**
 * The key's counts, from one shard's: exact with one shard; with several, the
 * shard's remaining share times the number of shards (requests are spread
 * evenly over the shards, so this is what remains on average).
 */
export function keyCounts(
  limits: PlanLimits,
  shards: number,
  allowance: PlanLimits,
  shardCounts: { minuteCount: number; dayCount: number },
): { minuteCount: number; dayCount: number } {
  if (shards === 1) return shardCounts;
  const used = (total: number, share: number, count: number) => Math.max(0, total - Math.max(0, share - count) * shards);
  return {
    minuteCount: used(limits.perMinute, allowance.perMinute, shardCounts.minuteCount),
    dayCount: used(limits.perDay, allowance.perDay, shardCounts.dayCount),
  };
}

/** Headers for a counted request: the window with fewer requests left wins (the minute on a tie). */
export function countedVerdict(limits: PlanLimits, windows: Windows, minuteCount: number, dayCount: number): Verdict {
  const minuteLeft = limits.perMinute - minuteCount;
  const dayLeft = limits.perDay - dayCount;
  return {
    window:
      dayLeft < minuteLeft
        ? reportedWindow(limits.perDay, dayLeft, windows.dayEnd)
        : reportedWindow(limits.perMinute, minuteLeft, windows.minuteEnd),
  };
}

/** Seconds until an instant, rounded up, at least 1: what Retry-After carries. */
export function secondsUntil(resetSeconds: number, nowMs: number): number {
  return Math.max(1, Math.ceil(resetSeconds - nowMs / 1000));
}

export function refusedVerdict(
  reason: 'minute_exhausted' | 'day_exhausted' | 'suspended',
  limits: PlanLimits,
  windows: Windows,
  nowMs: number,
  suspendedUntil = 0,
): Verdict {
  if (reason === 'suspended') {
    const retryAfter = secondsUntil(suspendedUntil, nowMs);
    return {
      window: reportedWindow(limits.perMinute, 0, suspendedUntil),
      refusal: new ApiError(
        'key_suspended',
        `This API key is suspended for ${BAN_DURATION_SECONDS / 60} minutes because it kept calling after 429 responses. Retry after ${retryAfter} seconds.`,
        retryAfter,
      ),
    };
  }
  if (reason === 'day_exhausted') {
    const retryAfter = secondsUntil(windows.dayEnd, nowMs);
    return {
      window: reportedWindow(limits.perDay, 0, windows.dayEnd),
      refusal: new ApiError(
        'quota_exceeded',
        `The daily quota of ${limits.perDay} requests is used up; it resets at 00:00 UTC. Retry after ${retryAfter} seconds.`,
        retryAfter,
      ),
    };
  }
  const retryAfter = secondsUntil(windows.minuteEnd, nowMs);
  return {
    window: reportedWindow(limits.perMinute, 0, windows.minuteEnd),
    refusal: new ApiError(
      'rate_limited',
      `The limit of ${limits.perMinute} requests per minute is used up. Retry after ${retryAfter} seconds.`,
      retryAfter,
    ),
  };
}
