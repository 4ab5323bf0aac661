import { z } from 'zod';
import { errorCodes } from '../definitions/error-codes';
import { DEFAULT_LIMIT, listPetsContract, MAX_LIMIT } from '../definitions/operations/list-pets';
import { errorObjectSchema, petIdSchema, petSchema } from '../definitions/operations/pet-schemas';
import { DEFAULT_STATUS, MAX_ID, NAME_MAX_CODE_POINTS, newPetSchema, petStatusSchema } from '../functions/domain/pet';

/**
 * The JSON Schemas of the document, generated with zod's own z.toJSONSchema from
 * the schemas of the operation contracts (definitions/operations/), which the
 * handlers validate with. Where zod checks something with a
 * refinement or a transform (which has no JSON Schema form), the equivalent
 * keywords are attached here as metadata of that very zod schema; the tests in
 * test/unit/openapi-schemas.test.ts check that zod and the document accept and
 * refuse the same values, so these cannot drift apart silently either.
 */
export type JsonSchema = Record<string, unknown>;

/** Where components live in the document; every $ref the generator writes points here. */
export const schemaRef = (id: string) => `#/components/schemas/${id}`;

const listPetsQuerySchema = listPetsContract.request.query;

/** The id of the Error object's schema: `Error` would shadow the global Error class in generated TypeScript. */
export const ERROR_SCHEMA_ID = 'ErrorObject';

/**
 * Unicode's control characters (general category Cc) and White_Space characters,
 * listed as characters and ranges: patterns keep to the regex subset JSON Schema
 * recommends for interoperability (JSON Schema 2020-12 Core, section 6.4
 * "Regular Expressions": characters, classes, ranges, quantifiers, anchors,
 * groups, alternation), which has no property escapes such as \p{Cc}. Both sets
 * are fixed by the Unicode standard (PropList.txt); a unit test checks them
 * against JavaScript's \p{Cc} and \p{White_Space}.
 */
export const CONTROL_CHARACTER_RANGES = '\u0000-\u001f\u007f-\u009f';
export const WHITE_SPACE_CHARACTERS = '\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000';

/**
 * A name (DESIGN decision 2): at least one character that is not whitespace, at
 * most 100 Unicode code points, no control characters, well-formed Unicode. The
 * pattern holds all but the last, which no portable pattern can say: a lone
 * surrogate is refused by the server and stated in the description. JSON Schema
 * counts string length in code points too.
 */
export const NAME_PATTERN = `^[^${CONTROL_CHARACTER_RANGES}]*[^${CONTROL_CHARACTER_RANGES}${WHITE_SPACE_CHARACTERS}][^${CONTROL_CHARACTER_RANGES}]*$`;

/** Codes in the closed set that no operation answers with today, and why they are there. */
const reservedCodes: Partial<Record<keyof typeof errorCodes, string>> = {
  forbidden: " Reserved: API Gateway's answer to a request its configuration refuses; no operation of this API answers 403 today.",
};
const errorTable = Object.entries(errorCodes)
  .map(([code, { status, meaning }]) => `| \`${code}\` | ${status} | ${meaning}${reservedCodes[code as keyof typeof errorCodes] ?? ''} |`)
  .join('\n');

/**
 * Metadata for z.toJSONSchema: `id` makes a schema a component (referenced with
 * $ref); every other key is merged into the generated JSON Schema.
 */
type Metadata = { id?: string } & JsonSchema;
const metadata = z.registry<Metadata>();

metadata.add(petStatusSchema, {
  id: 'PetStatus',
  description: `The state of a pet. \`${DEFAULT_STATUS}\` when none is sent at creation.`,
});
metadata.add(newPetSchema, {
  id: 'NewPet',
  description: 'The creation payload. Any other field, `id` included, is refused with 400.',
  examples: [{ name: 'Rex', categoryId: 1 }],
});
metadata.add(newPetSchema.shape.name, {
  description: `The pet's name: 1 to ${NAME_MAX_CODE_POINTS} characters (Unicode code points), at least one of them not whitespace (Unicode White_Space); no control characters (Unicode category Cc); well-formed Unicode: a lone surrogate (category Cs) is refused with 400, a rule the pattern cannot state portably.`,
  minLength: 1,
  maxLength: NAME_MAX_CODE_POINTS,
  pattern: NAME_PATTERN,
});
metadata.add(newPetSchema.shape.categoryId, {
  description: 'The category of the pet. An integer: the string "1" is refused.',
  format: 'int64',
});
metadata.add(newPetSchema.shape.status, { default: DEFAULT_STATUS });
metadata.add(petSchema, {
  id: 'Pet',
  description: 'An animal of the catalogue: the creation payload plus the id the service assigned.',
  examples: [{ id: 1, name: 'Rex', categoryId: 1, status: DEFAULT_STATUS }],
});
metadata.add(petIdSchema, {
  description: `Assigned by the service: unique, never reused, roughly increasing, not contiguous; from 1 to ${MAX_ID} (2^53−1, exact in any JSON client).`,
  format: 'int64',
});
metadata.add(errorObjectSchema, {
  id: ERROR_SCHEMA_ID,
  description: `Every error, from the functions and from API Gateway alike. \`code\` is one of a closed set; \`status\` repeats the HTTP status; \`message\` is for people and never reveals internals.\n\n| code | status | meaning |\n|---|---|---|\n${errorTable}`,
  examples: [{ code: 'not_found', message: 'No pet has the id 42.', status: 404 }],
});
metadata.add(errorObjectSchema.shape.code, { description: 'Machine-readable; one of the closed set in the table above.' });
metadata.add(errorObjectSchema.shape.message, { description: 'Human-readable; may change at any time.' });
metadata.add(errorObjectSchema.shape.status, { type: 'integer', description: 'The HTTP status code of the response.' });

// Query parameters: the value after zod has parsed the string (io "output").
// `limit` is parsed from a base-10 string by a regex and a transform, so it is a
// number for zod but only ever an integer: say so.
metadata.add(listPetsQuerySchema.shape.limit, {
  type: 'integer',
  description: `How many pets a page holds at most: a base-10 integer from 1 to ${MAX_LIMIT}; ${DEFAULT_LIMIT} when not sent.`,
});
metadata.add(listPetsQuerySchema.shape.status, { description: 'Only pets in this state.' });
metadata.add(listPetsQuerySchema.shape.cursor, {
  description: 'Opaque: never build it, copy it from the `Link: rel="next"` URL (best: follow that URL as it is). Valid only with the `status` it was made for.',
});

/** The schemas under components/schemas, keyed by their id. */
export function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(metadata, { io: 'input', uri: schemaRef, metadata, unrepresentable: 'throw' }) as {
    schemas: Record<string, JsonSchema>;
  };
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, withoutDialect(schema)]));
}

/** One schema, inline, with references to the components instead of local $defs. */
export function inlineSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const generated = withoutDialect(z.toJSONSchema(schema, { io, metadata, unrepresentable: 'throw' }) as JsonSchema);
  const json = JSON.parse(
    JSON.stringify(generated).replace(/"#\/\$defs\/([^"]+)"/g, (_, id: string) => JSON.stringify(schemaRef(id))),
  ) as JsonSchema;
  const { $defs, ...inline } = json;
  // Each definition zod extracted must be a component already, and the same one.
  const components = componentSchemas();
  for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
    if (JSON.stringify(definition) !== JSON.stringify(components[id])) throw new Error(`Schema ${id} differs from its component`);
  }
  return inline;
}

/** The query parameters of listPets, each as a JSON Schema. */
export function listPetsQueryParameterSchemas(): Record<string, { schema: JsonSchema; required: boolean }> {
  const shape = listPetsQuerySchema.shape;
  return Object.fromEntries(
    Object.entries(shape).map(([name, schema]) => [
      name,
      // A parameter with a default, or an optional one, need not be sent.
      { schema: inlineSchema(schema, 'output'), required: !schema.safeParse(undefined).success },
    ]),
  );
}

/**
 * The petId path parameter: the handler's petIdSchema parses a plain decimal
 * string with a regex and a transform, which JSON Schema cannot express; the
 * value it yields is this integer.
 */
export function petIdParameterSchema(): JsonSchema {
  return { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID };
}

/** A component or an inline schema lives inside the document: no dialect, no $id of its own. */
function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  return rest;
}
