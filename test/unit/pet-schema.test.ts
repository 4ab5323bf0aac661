import fc from 'fast-check';
import { ApiError } from '../../functions/domain/errors';
import { newPetSchema } from '../../functions/domain/pet';
import { parseOrThrow } from '../../functions/domain/validation';

const parse = (body: unknown) => parseOrThrow(newPetSchema, body, 'request body');

describe('creation payload (decision 2)', () => {
  it('accepts every valid payload and keeps it as sent', () => {
    const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((text) => /[^\p{White_Space}]/u.test(text) && !/\p{Cc}/u.test(text) && [...text].length <= 100);
    fc.assert(
      fc.property(name, fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.constantFrom(undefined, 'available', 'pending', 'sold'), (petName, categoryId, status) => {
        const body = status === undefined ? { name: petName, categoryId } : { name: petName, categoryId, status };
        expect(parse(body)).toEqual(body);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a categoryId that is not an integer from 1 to 2^53-1', () => {
    const bad = fc.oneof(
      fc.integer({ max: 0 }),
      fc.double().filter((value) => !Number.isSafeInteger(value) || value < 1),
      fc.string(),
      fc.constant(null),
      fc.boolean(),
      fc.constant(Number.MAX_SAFE_INTEGER + 1),
    );
    fc.assert(
      fc.property(bad, (categoryId) => {
        expect(() => parse({ name: 'Rex', categoryId })).toThrow(/categoryId/);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses names that are blank, too long, or carry control characters', () => {
    expect(() => parse({ name: '\u0085\u00a0\u2003\t', categoryId: 1 })).toThrow(/non-whitespace/);
    expect(() => parse({ name: 'x'.repeat(101), categoryId: 1 })).toThrow(/at most 100/);
    expect(() => parse({ name: 'tab\there', categoryId: 1 })).toThrow(/control/);
    expect(() => parse({ name: '\ud800', categoryId: 1 })).toThrow(/Unicode/);
    expect(parse({ name: 'é'.repeat(100), categoryId: 1 }).name).toHaveLength(100);
  });

  it('refuses unknown fields, id and prototype keys included', () => {
    for (const body of ['{"name":"a","categoryId":1,"id":1}', '{"name":"a","categoryId":1,"__proto__":{"x":1}}', '{"name":"a","categoryId":1,"constructor":1}']) {
      const error = (() => {
        try {
          parse(JSON.parse(body));
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).message).toMatch(/Unknown field/);
    }
  });
});
