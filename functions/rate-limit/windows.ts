import { BAN_DURATION_SECONDS, type PlanLimits } from '../../definitions/plans';
import { ApiError } from '../domain/errors';

/**
 * Rate-limit rules (decisions 8 and 9): fixed UTC windows of one minute
 * and one day; headers that describe the window closest to exhaustion; a
 * temporary ban for keys that keep calling after their 429s. Pure functions:
 * the limiter (rate-limit/limiter.ts) leases allowance (rate-limit/allowance.ts) with
 * atomic writes in DynamoDB (rate-limit/counter-table.ts).
 */

/** A key is suspended when it sends this many refused requests within one UTC minute… */
export function banThreshold(limits: PlanLimits): number {
  return limits.perMinute;
}
/** …for this long (definitions/plans.ts: a fact of the contract the docs and the OpenAPI document state too). */
export { BAN_DURATION_SECONDS };

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
    day: dayOf(dayStartMs),
    dayEnd: (dayStartMs + DAY_MS) / 1000,
  };
}

/** The last day named: every request asks, and the name changes once a day (toISOString is most of windowsAt's cost). */
let lastDay = { startMs: Number.NaN, name: '' };

function dayOf(dayStartMs: number): string {
  if (lastDay.startMs !== dayStartMs) lastDay = { startMs: dayStartMs, name: new Date(dayStartMs).toISOString().slice(0, 10) };
  return lastDay.name;
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

/** Refusals an instance answers before it records them for the ban rule (decision 9): a tenth of the threshold, at least 1. */
export function refusalBatch(limits: PlanLimits): number {
  return Math.max(1, Math.ceil(banThreshold(limits) / 10));
}

/** Why a request is refused. */
export type Refusal = 'minute_exhausted' | 'day_exhausted' | 'banned';

/** What a customer has used of its minute and its day. */
export interface Used {
  minute: number;
  day: number;
}

/** What a request was, counted: served (with what the customer has used) or refused (and why). */
export type Counted = { served: Used } | { refused: Refusal };

/** The window and refusal of a counted request (`bannedUntil` for a ban's Retry-After). */
export function verdictOf(counted: Counted, limits: PlanLimits, windows: Windows, nowMs: number, bannedUntil: number): WindowVerdict {
  if ('served' in counted) return countedVerdict(limits, windows, counted.served.minute, counted.served.day);
  return refusedVerdict(counted.refused, limits, windows, nowMs, bannedUntil);
}

/**
 * What the limiter says of one request (the door's RateLimiter.admit): the
 * window it reports, its 429 if refused, the X-RateLimit-* headers of the
 * answer whatever it is, and how to take back its charge when the request is
 * answered 503 (docs/clients.md, "Counting: each request once").
 */
export interface Verdict {
  window: ReportedWindow;
  /** Set when the request is refused: a 429 to send instead of serving it. */
  refusal?: ApiError;
  /** X-RateLimit-Limit, -Remaining and -Reset (decision 8); a refund counts the request no more. */
  headers: Record<string, string>;
  /** Takes back the request's charge; whether it did (a refused request has none). */
  refund(): Promise<boolean>;
}

/** A verdict's window arithmetic alone. */
export type WindowVerdict = Pick<Verdict, 'window' | 'refusal'>;

/** Headers for a counted request: the window with fewer requests left wins (the minute on a tie). */
export function countedVerdict(limits: PlanLimits, windows: Windows, minuteUsed: number, dayUsed: number): WindowVerdict {
  const minuteLeft = limits.perMinute - minuteUsed;
  const dayLeft = limits.perDay - dayUsed;
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

export function refusedVerdict(reason: Refusal, limits: PlanLimits, windows: Windows, nowMs: number, bannedUntil = 0): WindowVerdict {
  if (reason === 'banned') {
    const retryAfter = secondsUntil(bannedUntil, nowMs);
    return {
      window: reportedWindow(limits.perMinute, 0, bannedUntil),
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
