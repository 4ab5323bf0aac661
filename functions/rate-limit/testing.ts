/**
 * The rate limiter's parts, for tests and benchmarks only (a lint rule keeps
 * the functions, lib/ and admin/ on the door, rate-limit/index.ts): the
 * limiter itself, its sizing rules and window arithmetic, the counter store's
 * shapes and the counter item's key.
 */

export { LOOKBACK_MS, leaseSpare, MIN_RECENT_REQUESTS, RecentRequests, spareCap, windowEnding } from './allowance';
export { refusedAtGateway } from './bans';
export type { Caller, CounterWrite } from './counter-store';
export { counterKey } from './counter-table';
export { rateLimitHeaders } from './headers';
export * from './index';
export { RateLimiter } from './limiter';
export {
  BAN_DURATION_SECONDS,
  banThreshold,
  countedVerdict,
  refusalBatch,
  refusedVerdict,
  secondsUntil,
  type Verdict,
  type Windows,
  windowsAt,
} from './windows';
