import fc from 'fast-check';
import { idempotencyKeySchema } from '../../definitions/operations/create-pet';
import { petIdPathSchema } from '../../definitions/operations/get-pet';
import { CURSOR_PATTERN, listPetsContract } from '../../definitions/operations/list-pets';
import { encodeCursor } from '../../functions/domain/cursor';
import { MAX_ID, newPetSchema, type Pet, petStatuses, toPetBody, unreadableTextReason } from '../../functions/domain/pet';
import { NAME_PATTERN } from '../../openapi/schemas';
import { contract } from '../support/contract';

/**
 * Where zod validates with a refinement, a regex or a transform, the document
 * carries hand-written JSON Schema keywords (openapi/schemas.ts). These
 * properties check, on thousands of values, that the committed document and the
 * code accept and refuse exactly the same inputs.
 */
const runs = 2000;
const newPet = contract.validator('/components/schemas/NewPet');
const name = contract.validator('/components/schemas/NewPet/properties/name');
const categoryId = contract.validator('/components/schemas/NewPet/properties/categoryId');
const pet = contract.validator('/components/schemas/Pet');
const parameter = (path: string, method: string, parameterName: string) => {
  const parameters =
    (contract as unknown as { document: { paths: Record<string, Record<string, { parameters: { name: string }[] }>> } }).document.paths[
      path
    ]?.[method]?.parameters ?? [];
  const index = parameters.findIndex((candidate) => candidate.name === parameterName);
  expect(index).toBeGreaterThanOrEqual(0);
  return contract.validator(`/paths/${path.replace(/\//g, '~1')}/${method}/parameters/${index}/schema`);
};

const edgeStrings = [
  '',
  ' ',
  '\u00a0',
  '\u2003x',
  'a\u0000',
  'a\u007f',
  'a\u0085',
  '\ud800',
  'a\udc00b',
  '🐶',
  '🐶'.repeat(100),
  '🐶'.repeat(101),
  'x'.repeat(100),
  'x'.repeat(101),
  '\u200b',
  '\ufeff',
  '\u202e',
  'Rex',
];

it('names: the document and zod agree on Basic Multilingual Plane text; beyond it (and for lone surrogates) the document never refuses what zod takes', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.constantFrom(...edgeStrings),
        fc.string({ unit: 'binary', maxLength: 110 }),
        fc.string({ unit: 'grapheme', maxLength: 110 }),
        fc.string({ unit: fc.constantFrom(' ', '\t', '\n', 'a', '\u0001', '\u3000'), maxLength: 5 }),
      ),
      (value) => {
        const serverAccepts = newPetSchema.shape.name.safeParse(value).success;
        const portable = value.isWellFormed() && [...value].every((character) => (character.codePointAt(0) ?? 0) <= 0xffff);
        // The rules a portable pattern cannot state are left to the description (and the server).
        if (portable) expect(name(value)).toBe(serverAccepts);
        else if (serverAccepts) expect(name(value)).toBe(true);
      },
    ),
    { numRuns: runs },
  );
});

const jsonValue = fc.oneof(
  fc.constantFrom(0, -0, 1, 1.5, MAX_ID, MAX_ID + 1, 2 ** 63, -1, '1', '', null, true, [], {}),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string(),
);

it('categoryId: the document and zod agree', () => {
  fc.assert(
    fc.property(fc.oneof(jsonValue, fc.integer({ min: 1, max: MAX_ID })), (value) => {
      expect(categoryId(value)).toBe(newPetSchema.shape.categoryId.safeParse(value).success);
    }),
    { numRuns: runs },
  );
});

it('whole creation payloads: the document and zod agree', () => {
  const payload = fc.oneof(
    fc.record(
      {
        name: fc.oneof(fc.constantFrom(...edgeStrings), jsonValue),
        categoryId: fc.oneof(fc.integer({ min: 1, max: MAX_ID }), jsonValue),
        status: fc.oneof(fc.constantFrom(...petStatuses, 'lost', 'AVAILABLE'), jsonValue),
        id: jsonValue,
        extra: jsonValue,
      },
      { requiredKeys: [] },
    ),
    fc.json().map((text) => JSON.parse(text) as unknown),
  );
  fc.assert(
    fc.property(payload, (value) => {
      const body = JSON.parse(JSON.stringify(value)) as unknown;
      // A lone surrogate in the name is refused by the server alone (the description says so): judge the rest.
      const name = (body as { name?: unknown } | null)?.name;
      const portable = typeof name === 'string' && !name.isWellFormed() ? { ...(body as object), name: name.toWellFormed() } : body;
      expect(newPet(body)).toBe(newPetSchema.safeParse(portable).success);
    }),
    { numRuns: runs },
  );
});

it('every pet the service can send matches the Pet schema', () => {
  const validName = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
    .filter((value) => newPetSchema.shape.name.safeParse(value).success);
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: MAX_ID }),
      validName,
      fc.integer({ min: 1, max: MAX_ID }),
      fc.constantFrom(...petStatuses),
      (id, petName, category, status) => {
        const body: Pet = toPetBody({ id, name: petName, categoryId: category, status });
        expect(pet(body)).toBe(true);
        expect(pet({ ...body, extra: 1 })).toBe(false);
      },
    ),
    { numRuns: 500 },
  );
});

it('limit: the value zod parses from a decimal string is an integer the document allows, and nothing else', () => {
  const limit = parameter('/pets', 'get', 'limit');
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: -5, max: 200 }), fc.double({ min: -1, max: 200, noNaN: true })), (value) => {
      expect(limit(value)).toBe(listPetsContract.request.query.shape.limit.safeParse(String(value)).success);
    }),
    { numRuns: runs },
  );
});

it('petId: the document and the handler agree on every integer', () => {
  const petId = parameter('/pets/{petId}', 'get', 'petId');
  fc.assert(
    fc.property(
      fc.oneof(fc.bigInt({ min: -10n, max: 2n ** 64n }), fc.constantFrom(0n, 1n, BigInt(MAX_ID), BigInt(MAX_ID) + 1n)),
      (value) => {
        expect(petId(Number(value))).toBe(petIdPathSchema.safeParse(String(value)).success);
      },
    ),
    { numRuns: runs },
  );
});

it("name: the portable pattern and the server's rule agree on every BMP code point; beyond it the pattern never refuses what the server takes", () => {
  const pattern = new RegExp(NAME_PATTERN, 'u');
  const serverAccepts = (name: string) => unreadableTextReason(name) === undefined;
  for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
    for (const name of [String.fromCodePoint(codePoint), `a${String.fromCodePoint(codePoint)}`]) {
      const agree = codePoint <= 0xffff ? pattern.test(name) === serverAccepts(name) : pattern.test(name) || !serverAccepts(name);
      if (!agree) throw new Error(`U+${codePoint.toString(16)} in ${JSON.stringify(name)}: the document and the server disagree`);
    }
  }
});

it('Idempotency-Key: the document and the handler agree', () => {
  const idempotencyKey = parameter('/pets', 'post', 'Idempotency-Key');
  const printable = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '"', '\\', ' ', '~', '!', 'é'), maxLength: 10 });
  const value = fc.oneof(
    printable,
    printable.map((text) => `"${text}"`),
    fc.constantFrom('""', '"', 'x'.repeat(255), 'x'.repeat(256), `"${'x'.repeat(255)}"`, `"${'x'.repeat(256)}"`, '"a"b"', 'a"'),
  );
  const accepted = (header: string) => idempotencyKeySchema.safeParse(header).success;
  fc.assert(
    // HTTP strips whitespace around a header value: only values without any reach the API.
    fc.property(
      value.filter((text) => text === text.trim()),
      (header) => {
        expect(idempotencyKey(header)).toBe(accepted(header));
      },
    ),
    { numRuns: runs },
  );
});

it('cursor: every cursor the server makes matches the pattern the contract and the document state', () => {
  const cursor = parameter('/pets', 'get', 'cursor');
  fc.assert(
    fc.property(fc.integer({ min: 1, max: MAX_ID }), fc.constantFrom(undefined, ...petStatuses), fc.nat(), (afterId, status, at) => {
      const made = encodeCursor({ afterId, status, walkStartedAt: at });
      expect(made).toMatch(CURSOR_PATTERN);
      expect(cursor(made)).toBe(true);
    }),
    { numRuns: runs },
  );
  expect(cursor('not a cursor!')).toBe(false);
});
