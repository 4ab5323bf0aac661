import fc from 'fast-check';
import { refusedAtGateway } from '../../functions/rate-limit/bans';

const cache = { ttlSeconds: 300, answeredWithinSeconds: 10 };

describe('refusedAtGateway: a banned key is denied at the gateway only while its ban outlasts the cached answer', () => {
  it('never: no ban', () => {
    expect(refusedAtGateway(undefined, 0, cache)).toBe(false);
  });

  it('a Deny given at any instant, kept for the TTL from when it may arrive, ends by the ban’s end: a key is never refused after it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000_000_000 }), fc.integer({ min: -3_600_000, max: 3_600_000 }), (until, offsetMs) => {
        const now = until * 1000 - offsetMs;
        if (refusedAtGateway(until, now, cache)) {
          expect(now + (cache.ttlSeconds + cache.answeredWithinSeconds) * 1000).toBeLessThan(until * 1000);
        }
      }),
    );
  });

  it('denies a ban of 15 minutes from its start, and lets the operation answer its last TTL plus the answer time', () => {
    const until = 1_000_000;
    expect(refusedAtGateway(until, (until - 900) * 1000, cache)).toBe(true);
    expect(refusedAtGateway(until, (until - 311) * 1000, cache)).toBe(true);
    expect(refusedAtGateway(until, (until - 310) * 1000, cache)).toBe(false);
    expect(refusedAtGateway(until, until * 1000, cache)).toBe(false);
  });
});
