import type { PlanLimits } from '../../definitions/plans';

/**
 * Leases of allowance (decision 8, issue 29): a function instance takes part of
 * a key's remaining allowance with one conditional write on the key's counter
 * item and serves the key's next requests from it in memory. Pure rules here;
 * the limiter (rate-limit/limiter.ts) applies them, the repository writes them.
 *
 * The item counts what was granted, not what was served: a grant never takes
 * the window past its limit, so the key is never served past it. What an
 * instance holds unused (its spare) is lost to the key if the instance never
 * sends the key's requests again (a Lambda instance gone idle cannot give it
 * back); the item records the spare handed out this minute and a lease takes
 * spare only while the total stays within SPARE_SHARE of the minute's limit.
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
 * holding allowance gives it back at its next request (rate-limit/limiter.ts). A key
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
