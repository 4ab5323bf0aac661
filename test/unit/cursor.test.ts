import fc from 'fast-check';
import { CURSOR_PATTERN } from '../../definitions/operations/list-pets';
import {
  decodeCursor,
  EARLIEST_WALK_START,
  encodeCursor,
  MAX_CURSOR_AFTER_ID,
  signedCursor,
  WALK_START_CLOCK_ALLOWANCE_MS,
} from '../../functions/domain/cursor';
import { ApiError } from '../../functions/domain/errors';
import { MAX_ID, petStatuses } from '../../functions/domain/pet';

const status = fc.constantFrom(undefined, ...petStatuses);
/** The service's clock when the cursors below are read. */
const now = Date.parse('2027-03-01T12:00:00Z');
/** Any walk start a cursor of ours can carry, read at `now`. */
const issuedStart = fc.integer({ min: EARLIEST_WALK_START, max: now + WALK_START_CLOCK_ALLOWANCE_MS });

describe('list cursor', () => {
  it('decodes what it encoded, for any id, status and walk start it can issue', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_CURSOR_AFTER_ID }), status, issuedStart, (afterId, filter, at) => {
        expect(decodeCursor(encodeCursor({ afterId, status: filter, walkStartedAt: at }), filter, now)).toEqual({
          afterId,
          status: filter,
          walkStartedAt: at,
        });
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a cursor without a walk start ("1:<afterId>:<status>" after its MAC): no deployed version made one', () => {
    const withoutStart = 'mPOsLF_zYtx4ab3xMToyNjE6YXZhaWxhYmxl';
    expect(() => decodeCursor(withoutStart, 'available', now)).toThrow(ApiError);
  });

  it('fits the pattern the document states, at its longest', () => {
    // The largest id, the longest status, a start 14 digits long.
    expect(encodeCursor({ afterId: Number.MAX_SAFE_INTEGER, status: 'available', walkStartedAt: 10 ** 14 - 1 })).toMatch(CURSOR_PATTERN);
  });

  it('refuses any single-character change (tampering) with a 400', () => {
    const cursor = encodeCursor({ afterId: 42, status: 'available', walkStartedAt: now - 5_000 });
    fc.assert(
      fc.property(
        fc.nat({ max: cursor.length - 1 }),
        fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
        (index, replacement) => {
          fc.pre(cursor[index] !== replacement);
          const tampered = cursor.slice(0, index) + replacement + cursor.slice(index + 1);
          expect(() => decodeCursor(tampered, 'available', now)).toThrow(ApiError);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        expect(() => decodeCursor(text, undefined, now)).toThrow(ApiError);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a cursor made for another status filter', () => {
    const cursor = encodeCursor({ afterId: 7, status: 'sold', walkStartedAt: now - 5_000 });
    expect(() => decodeCursor(cursor, undefined, now)).toThrow(/another status/);
    expect(() => decodeCursor(cursor, 'pending', now)).toThrow(/another status/);
  });
});

/**
 * The MAC's key is in the source: anyone can sign a cursor (decision 5). So
 * every field is range-checked as a query parameter would be, and a signed
 * cursor this service could not have issued is the same 400 as a garbled one.
 */
describe('a signed cursor the service could not have issued', () => {
  const start = String(now - 5_000).padStart(14, '0');
  const refusal = 'cursor is invalid: use the URL of the Link rel="next" header as it is.';
  const refused = (payload: string, filter = undefined as (typeof petStatuses)[number] | undefined) =>
    expect(() => decodeCursor(signedCursor(payload), filter, now)).toThrow(new ApiError('invalid_request', refusal));

  it('names an id no next page can start after: 2^53−1 and past it, 0, −1, or not a plain integer', () => {
    for (const afterId of [MAX_ID, MAX_ID + 1, 10 ** 16 - 1, 0, -1, '01', '1.5', '1e3', '']) refused(`2:${start}:${afterId}:`);
    // The largest it can name still decodes: the page after it is simply empty.
    expect(decodeCursor(signedCursor(`2:${start}:${MAX_ID - 1}:`), undefined, now).afterId).toBe(MAX_ID - 1);
  });

  it('holds an unknown field, or lacks one', () => {
    for (const payload of [`2:${start}:7::extra`, `2:${start}:7:sold:x`, `2:${start}:7`, `3:${start}:7:`, `2:${start}:7:Sold`])
      refused(payload);
    refused(`2:${start}:7:lost`);
  });

  it('carries a walk start before the service existed or later than its clock allows', () => {
    for (const at of [0, EARLIEST_WALK_START - 1, now + WALK_START_CLOCK_ALLOWANCE_MS + 1, 10 ** 14 - 1])
      refused(`2:${String(at).padStart(14, '0')}:7:`);
    for (const at of [EARLIEST_WALK_START, now + WALK_START_CLOCK_ALLOWANCE_MS])
      expect(decodeCursor(signedCursor(`2:${String(at).padStart(14, '0')}:7:`), undefined, now).walkStartedAt).toBe(at);
  });
});
