import fc from 'fast-check';
import { CURSOR_PATTERN } from '../../definitions/operations/list-pets';
import { decodeCursor, encodeCursor } from '../../functions/domain/cursor';
import { ApiError } from '../../functions/domain/errors';
import { petStatuses } from '../../functions/domain/pet';

const status = fc.constantFrom(undefined, ...petStatuses);

describe('list cursor', () => {
  it('decodes what it encoded, for any id, status and walk start', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        status,
        fc.nat({ max: 4_102_444_800_000 }),
        (afterId, filter, at) => {
          expect(decodeCursor(encodeCursor({ afterId, status: filter, walkStartedAt: at }), filter)).toEqual({
            afterId,
            status: filter,
            walkStartedAt: at,
          });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses a cursor without a walk start ("1:<afterId>:<status>" after its MAC): no deployed version made one', () => {
    const withoutStart = 'mPOsLF_zYtx4ab3xMToyNjE6YXZhaWxhYmxl';
    expect(() => decodeCursor(withoutStart, 'available')).toThrow(ApiError);
  });

  it('fits the pattern the document states, at its longest', () => {
    // The largest id, the longest status, a start 14 digits long.
    expect(encodeCursor({ afterId: Number.MAX_SAFE_INTEGER, status: 'available', walkStartedAt: 10 ** 14 - 1 })).toMatch(CURSOR_PATTERN);
  });

  it('refuses any single-character change (tampering) with a 400', () => {
    const cursor = encodeCursor({ afterId: 42, status: 'available', walkStartedAt: 1_795_000_000_000 });
    fc.assert(
      fc.property(
        fc.nat({ max: cursor.length - 1 }),
        fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
        (index, replacement) => {
          fc.pre(cursor[index] !== replacement);
          const tampered = cursor.slice(0, index) + replacement + cursor.slice(index + 1);
          expect(() => decodeCursor(tampered, 'available')).toThrow(ApiError);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        expect(() => decodeCursor(text, undefined)).toThrow(ApiError);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a cursor made for another status filter', () => {
    const cursor = encodeCursor({ afterId: 7, status: 'sold', walkStartedAt: 1_795_000_000_000 });
    expect(() => decodeCursor(cursor, undefined)).toThrow(/another status/);
    expect(() => decodeCursor(cursor, 'pending')).toThrow(/another status/);
  });
});
