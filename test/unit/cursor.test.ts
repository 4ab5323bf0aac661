import fc from 'fast-check';
import { CURSOR_PATTERN } from '../../definitions/operations/list-pets';
import { decodeCursor, encodeCursor } from '../../functions/domain/cursor';
import { ApiError } from '../../functions/domain/errors';
import { petStatuses } from '../../functions/domain/pet';

const status = fc.constantFrom(undefined, ...petStatuses);

describe('list cursor', () => {
  it('decodes what it encoded, for any id and status', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), status, (afterId, filter) => {
        expect(decodeCursor(encodeCursor({ afterId, status: filter }), filter)).toEqual({ afterId, status: filter });
      }),
      { numRuns: 1000 },
    );
  });

  it('carries when the walk began, and still reads cursors made before it did (format 1: no start)', () => {
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
    // A cursor of format 1, as servers before this one made them: "1:<afterId>:<status>" after its MAC.
    const madeBefore = 'mPOsLF_zYtx4ab3xMToyNjE6YXZhaWxhYmxl';
    expect(decodeCursor(madeBefore, 'available')).toEqual({ afterId: 261, status: 'available' });
  });

  it('fits the pattern the document states, at its longest', () => {
    // The largest id, the longest status, a start 14 digits long.
    expect(encodeCursor({ afterId: Number.MAX_SAFE_INTEGER, status: 'available', walkStartedAt: 10 ** 14 - 1 })).toMatch(CURSOR_PATTERN);
  });

  it.each([
    ['', undefined],
    [" (format 2: with the walk's start)", 1_795_000_000_000],
  ])('refuses any single-character change (tampering) with a 400%s', (_, walkStartedAt) => {
    const cursor = encodeCursor({ afterId: 42, status: 'available', walkStartedAt });
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
    const cursor = encodeCursor({ afterId: 7, status: 'sold' });
    expect(() => decodeCursor(cursor, undefined)).toThrow(/another status/);
    expect(() => decodeCursor(cursor, 'pending')).toThrow(/another status/);
  });
});
