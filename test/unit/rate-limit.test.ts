/**
 * The rate-limit rules without DynamoDB: which windows a request falls in,
 * which window the headers describe, what a refusal says and when to retry.
 * The atomic counting itself is tested over HTTP (test/e2e/rate-limits.test.ts).
 */
import fc from 'fast-check';
import type { PlanLimits } from '../../definitions/plans';
import { ApiError } from '../../functions/domain/errors';
import { LOOKBACK_MS, leaseSpare, MIN_RECENT_REQUESTS, RecentRequests, spareCap, windowEnding } from '../../functions/rate-limit/allowance';
import { rateLimitHeaders } from '../../functions/rate-limit/headers';
import {
  BAN_DURATION_SECONDS,
  banThreshold,
  countedVerdict,
  refusalBatch,
  refusedVerdict,
  secondsUntil,
  type WindowVerdict,
  windowsAt,
} from '../../functions/rate-limit/windows';

/** What the caller sees of a verdict. */
const headersOf = (verdict: WindowVerdict) => rateLimitHeaders(verdict.window);

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
    const verdict = refusedVerdict('banned', pro, windows, nowMs, until);
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

describe('leases of allowance (functions/rate-limit/allowance.ts)', () => {
  const business: PlanLimits = { perMinute: 1_000, perDay: 100_000 };
  const sizing = {
    limits: business,
    recentRequests: 50,
    msLeftInMinute: 50_000,
    minuteLeft: 800,
    dayLeft: 90_000,
    spareRoom: 100,
    instances: 1,
  };

  it('count a quiet key request by request: no spare below MIN_RECENT_REQUESTS recent requests', () => {
    expect(leaseSpare({ ...sizing, recentRequests: MIN_RECENT_REQUESTS - 1 })).toBe(0);
    expect(leaseSpare({ ...sizing, recentRequests: MIN_RECENT_REQUESTS })).toBe(Math.floor(MIN_RECENT_REQUESTS * 0.625));
  });

  it('cover about the next 6 s at the recent rate, shrinking with the time left, what is left and the room for spare', () => {
    expect(leaseSpare(sizing)).toBe(31);
    // 2 s left at 5 requests a second: half of 10.
    expect(leaseSpare({ ...sizing, msLeftInMinute: 2_000 })).toBe(5);
    // Half of what is left, less the asking request, shared among the instances leasing this minute.
    expect(leaseSpare({ ...sizing, minuteLeft: 41 })).toBe(20);
    expect(leaseSpare({ ...sizing, minuteLeft: 41, instances: 4 })).toBe(5);
    expect(leaseSpare({ ...sizing, dayLeft: 1 })).toBe(0);
    expect(leaseSpare({ ...sizing, spareRoom: 3 })).toBe(3);
    expect(leaseSpare({ ...sizing, spareRoom: -2 })).toBe(0);
  });

  it('never take a window past its limit, nor the recorded spare past its cap', () => {
    fc.assert(
      fc.property(
        fc.record({
          recentRequests: fc.integer({ min: 0, max: 5_000 }),
          msLeftInMinute: fc.integer({ min: 1, max: 60_000 }),
          minuteLeft: fc.integer({ min: 1, max: 1_000 }),
          dayLeft: fc.integer({ min: 1, max: 100_000 }),
          spareRoom: fc.integer({ min: -100, max: 100 }),
          instances: fc.integer({ min: 1, max: 50 }),
        }),
        (input) => {
          const spare = leaseSpare({ limits: business, ...input });
          expect(spare).toBeGreaterThanOrEqual(0);
          expect(1 + spare).toBeLessThanOrEqual(Math.min(input.minuteLeft, input.dayLeft));
          expect(spare).toBeLessThanOrEqual(Math.max(0, input.spareRoom));
        },
      ),
    );
  });

  it("reach the window's end when what is left would give a lease no spare: fewer than two requests an instance, after the asking one", () => {
    // 20 instances leasing: spare needs 41 left (the asking request and 40 for two each).
    expect(windowEnding({ minuteLeft: 41, dayLeft: 90_000, instances: 20 })).toBe(false);
    expect(leaseSpare({ ...sizing, minuteLeft: 41, instances: 20 })).toBe(1);
    expect(windowEnding({ minuteLeft: 40, dayLeft: 90_000, instances: 20 })).toBe(true);
    expect(leaseSpare({ ...sizing, minuteLeft: 40, instances: 20 })).toBe(0);
    // The day's end as much as the minute's.
    expect(windowEnding({ minuteLeft: 800, dayLeft: 2, instances: 1 })).toBe(true);
    expect(windowEnding({ minuteLeft: 800, dayLeft: 3, instances: 1 })).toBe(false);
  });

  it('cap the spare of every instance together at a tenth of the minute', () => {
    expect(spareCap(business)).toBe(100);
    expect(spareCap({ perMinute: 60, perDay: 1_000 })).toBe(6);
    expect(spareCap({ perMinute: 5, perDay: 1_000 })).toBe(0);
  });

  it('size from the requests of the last LOOKBACK_MS only', () => {
    const recent = new RecentRequests();
    for (let ms = 0; ms < 20_000; ms += 1_000) recent.record(ms);
    expect(recent.countAt(19_000)).toBe(LOOKBACK_MS / 1_000 + 1);
    expect(recent.countAt(19_000 + LOOKBACK_MS + 1)).toBe(0);
  });
});

describe('the ban rule', () => {
  it('record refusals for the ban in batches of a tenth of the threshold, at least one', () => {
    expect(refusalBatch({ perMinute: 2, perDay: 10 })).toBe(1);
    expect(refusalBatch({ perMinute: 60, perDay: 1_000 })).toBe(6);
    expect(refusalBatch({ perMinute: 1_000, perDay: 100_000 })).toBe(100);
  });
});
