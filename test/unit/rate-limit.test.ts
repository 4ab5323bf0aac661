/**
 * The rate-limit rules without DynamoDB: which windows a request falls in,
 * which window the headers describe, what a refusal says and when to retry.
 * The atomic counting itself is tested over HTTP (test/e2e/rate-limits.test.ts).
 */
import fc from 'fast-check';
import { type PlanLimits, planNames, plans } from '../../definitions/plans';
import { ApiError } from '../../functions/domain/errors';
import {
  BAN_DURATION_SECONDS,
  banThreshold,
  countedVerdict,
  counterShards,
  keyCounts,
  MAX_COUNTER_SHARDS,
  refusalBatch,
  refusedVerdict,
  secondsUntil,
  shardAllowance,
  type Verdict,
  windowsAt,
} from '../../functions/domain/rate-limit';
import { rateLimitHeaders } from '../../functions/http/rate-limit-headers';

/** What the caller sees of a verdict. */
const headersOf = (verdict: Verdict) => rateLimitHeaders(verdict.window);

const pro: PlanLimits = { perMinute: 300, perDay: 10_000 };
const at = (iso: string) => Date.parse(iso);
const unix = (iso: string) => Date.parse(iso) / 1000;

describe('windows', () => {
  it('are the UTC minute and the UTC day around the instant', () => {
    expect(windowsAt(at('2029-06-01T12:34:56.789Z'))).toEqual({
      minuteStart: unix('2029-06-01T12:34:00Z'),
      minuteEnd: unix('2029-06-01T12:35:00Z'),
      day: '2029-06-01',
      dayEnd: unix('2029-06-02T00:00:00Z'),
    });
  });

  it('change exactly on the boundary, not a millisecond before', () => {
    expect(windowsAt(at('2029-06-01T23:59:59.999Z'))).toMatchObject({ day: '2029-06-01', minuteStart: unix('2029-06-01T23:59:00Z') });
    expect(windowsAt(at('2029-06-02T00:00:00.000Z'))).toMatchObject({ day: '2029-06-02', minuteStart: unix('2029-06-02T00:00:00Z') });
  });

  it('always contain the instant, a minute and a day long', () => {
    fc.assert(
      fc.property(fc.integer({ min: at('2000-01-01T00:00:00Z'), max: at('2100-01-01T00:00:00Z') }), (nowMs) => {
        const windows = windowsAt(nowMs);
        expect(windows.minuteStart * 1000).toBeLessThanOrEqual(nowMs);
        expect(windows.minuteEnd * 1000).toBeGreaterThan(nowMs);
        expect(windows.minuteEnd - windows.minuteStart).toBe(60);
        expect(Date.parse(`${windows.day}T00:00:00Z`) / 1000).toBe(windows.dayEnd - 86_400);
        expect(windows.dayEnd * 1000).toBeGreaterThan(nowMs);
      }),
    );
  });
});

describe('a counted request', () => {
  const windows = windowsAt(at('2029-06-01T12:34:56Z'));

  it('is served, with headers of the minute while the minute has fewer requests left', () => {
    const verdict = countedVerdict(pro, windows, 10, 20);
    expect(verdict.refusal).toBeUndefined();
    expect(headersOf(verdict)).toEqual({
      'X-RateLimit-Limit': '300',
      'X-RateLimit-Remaining': '290',
      'X-RateLimit-Reset': String(unix('2029-06-01T12:35:00Z')),
    });
  });

  it('describes the day once the day has fewer requests left', () => {
    expect(headersOf(countedVerdict(pro, windows, 10, 9_800))).toEqual({
      'X-RateLimit-Limit': '10000',
      'X-RateLimit-Remaining': '200',
      'X-RateLimit-Reset': String(unix('2029-06-02T00:00:00Z')),
    });
  });

  it('describes the minute on a tie', () => {
    expect(headersOf(countedVerdict({ perMinute: 100, perDay: 1_000 }, windows, 50, 950))['X-RateLimit-Limit']).toBe('100');
  });

  it('never reports a negative number of requests left', () => {
    expect(headersOf(countedVerdict(pro, windows, 301, 20))['X-RateLimit-Remaining']).toBe('0');
  });
});

describe('a refused request', () => {
  const nowMs = at('2029-06-01T12:34:56.200Z');
  const windows = windowsAt(nowMs);

  it('over the minute gets 429 rate_limited, retry at the next minute', () => {
    const verdict = refusedVerdict('minute_exhausted', pro, windows, nowMs);
    expect(verdict.refusal).toBeInstanceOf(ApiError);
    expect(verdict.refusal).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 4 });
    expect(verdict.refusal?.message).toContain('300 requests per minute');
    expect(headersOf(verdict)).toEqual({
      'X-RateLimit-Limit': '300',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(windows.minuteEnd),
    });
  });

  it('over the day gets 429 quota_exceeded, retry at 00:00 UTC', () => {
    const verdict = refusedVerdict('day_exhausted', pro, windows, nowMs);
    expect(verdict.refusal).toMatchObject({ code: 'quota_exceeded', retryAfterSeconds: 41_104 });
    expect(headersOf(verdict)).toEqual({
      'X-RateLimit-Limit': '10000',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(windows.dayEnd),
    });
  });

  it('of a suspended key gets 429 key_suspended, retry when the ban ends', () => {
    const until = Math.floor(nowMs / 1000) + BAN_DURATION_SECONDS;
    const verdict = refusedVerdict('suspended', pro, windows, nowMs, until);
    expect(verdict.refusal).toMatchObject({ code: 'key_suspended', retryAfterSeconds: 15 * 60 });
    expect(verdict.refusal?.message).toContain('suspended for 15 minutes');
    expect(headersOf(verdict)).toEqual({ 'X-RateLimit-Limit': '300', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(until) });
  });
});

describe('Retry-After', () => {
  it('rounds up and is never below one second', () => {
    expect(secondsUntil(100, 98_100)).toBe(2);
    expect(secondsUntil(100, 99_999)).toBe(1);
    expect(secondsUntil(100, 100_000)).toBe(1);
    expect(secondsUntil(100, 250_000)).toBe(1);
  });
});

describe('the ban', () => {
  it('comes after as many refused requests in a minute as the plan allows per minute, for 15 minutes', () => {
    expect(banThreshold(pro)).toBe(300);
    expect(banThreshold({ perMinute: 60, perDay: 1_000 })).toBe(60);
    expect(BAN_DURATION_SECONDS).toBe(900);
  });
});

describe('counter shards', () => {
  it('count every fixed plan on one item, so their Remaining is exact', () => {
    for (const plan of planNames) {
      const limits = plans[plan].limits;
      if (limits !== 'custom') expect(counterShards(limits)).toBe(1);
    }
    expect(counterShards({ perMinute: 1_001, perDay: 10_000 })).toBe(2);
    expect(counterShards({ perMinute: 10_000_000, perDay: 10_000_000 })).toBe(MAX_COUNTER_SHARDS);
  });

  it('split any limits exactly: the shares add up to the limits and differ by at most one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: 100_000_000 }), (perMinute, perDay) => {
        const limits = { perMinute, perDay };
        const shards = counterShards(limits);
        const shares = Array.from({ length: shards }, (_, index) => shardAllowance(limits, shards, index));
        expect(shares.reduce((sum, share) => sum + share.perMinute, 0)).toBe(perMinute);
        expect(shares.reduce((sum, share) => sum + share.perDay, 0)).toBe(perDay);
        const minutes = shares.map((share) => share.perMinute);
        expect(Math.max(...minutes) - Math.min(...minutes)).toBeLessThanOrEqual(1);
        // Every shard can count at least one request a minute (the new-minute update relies on it).
        expect(Math.min(...minutes)).toBeGreaterThanOrEqual(1);
      }),
    );
  });

  it('report one shard exactly and several by the shard remaining share times the shards', () => {
    expect(keyCounts(pro, 1, pro, { minuteCount: 7, dayCount: 9 })).toEqual({ minuteCount: 7, dayCount: 9 });
    const large = { perMinute: 3_000, perDay: 30_000 };
    const share = shardAllowance(large, 3, 0);
    expect(keyCounts(large, 3, share, { minuteCount: 900, dayCount: 1_000 })).toEqual({ minuteCount: 2_700, dayCount: 3_000 });
  });

  it('record refusals for the ban in batches of a tenth of the threshold, at least one', () => {
    expect(refusalBatch({ perMinute: 2, perDay: 10 })).toBe(1);
    expect(refusalBatch({ perMinute: 60, perDay: 1_000 })).toBe(6);
    expect(refusalBatch({ perMinute: 1_000, perDay: 100_000 })).toBe(100);
  });
});
