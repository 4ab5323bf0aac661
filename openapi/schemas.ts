import { z } from 'zod';
import { errorCodes } from '../definitions/error-codes';
import { DEFAULT_STATUS, MAX_ID, NAME_MAX_CODE_POINTS, newPetSchema, petStatusSchema } from '../functions/domain/pet';
import { DEFAULT_LIMIT, listPetsQuerySchema, MAX_LIMIT } from '../functions/list-pets/handler';

/**
 * The JSON Schemas of the document, generated with zod's own z.toJSONSchema from
 * the schemas the handlers validate with. Where zod checks something with a
 * refinement or a transform (which has no JSON Schema form), the equivalent
 * keywords are attached here as metadata of that very zod schema; the tests in
 * test/unit/openapi-schemas.test.ts check that zod and the document accept and
 * refuse the same values, so these cannot drift apart silently either.
 */
export type JsonSchema = Record<string, unknown>;

/** Where components live in the document; every $ref the generator writes points here. */
export const schemaRef = (id: string) => `#/components/schemas/${id}`;

/**
 * The Animal of the interface as the API sends it. functions/ has no zod schema
 * for responses (it builds them with toPetBody), so it is composed here from the
 * creation payload's own field schemas: the response can never allow a name the
 * creation payload refuses, or the reverse.
 */
const petIdSchema = z.int().min(1).max(MAX_ID);
export const petSchema = z.strictObject({
  id: petIdSchema,
  name: newPetSchema.shape.name,
  categoryId: newPetSchema.shape.categoryId,
  status: petStatusSchema,
});

/** The Error object; `code` is the closed set of definitions/error-codes.ts. */
const errorCodeNames = Object.keys(errorCodes) as [keyof typeof errorCodes, ...(keyof typeof errorCodes)[]];
const errorStatuses = [...new Set(Object.values(errorCodes).map((entry) => entry.status))].sort((a, b) => a - b);
export const errorSchema = z.strictObject({
  code: z.enum(errorCodeNames),
  message: z.string(),
  status: z.literal(errorStatuses),
});

/**
 * A name (DESIGN decision 2; the rule is functions/domain/pet.ts's, as one
 * pattern): at least one visible character, at most 100 Unicode code points, no
 * control, bidirectional override/isolate or noncharacter, well-formed Unicode
 * (no lone surrogate). JSON Schema counts string length in code points too, and
 * its patterns are ECMA-262 regular expressions with Unicode property escapes.
 */
export const NAME_PATTERN = '^[^\\p{Cc}\\p{Cs}\\u202A-\\u202E\\u2066-\\u2069\\p{Noncharacter_Code_Point}]*[^\\p{White_Space}\\p{Cc}\\p{Cf}\\p{Cs}\\p{Default_Ignorable_Code_Point}\\p{Noncharacter_Code_Point}][^\\p{Cc}\\p{Cs}\\u202A-\\u202E\\u2066-\\u2069\\p{Noncharacter_Code_Point}]*$';

const errorTable = Object.entries(errorCodes)
  .map(([code, { status, meaning }]) => `| \`${code}\` | ${status} | ${meaning} |`)
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
  description: `The pet's name: 1 to ${NAME_MAX_CODE_POINTS} characters (Unicode code points), at least one of them visible (not whitespace, a format character or one Unicode marks as ignorable in display, such as zero-width characters); no control characters, bidirectional override or isolate controls, or noncharacters.`,
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
metadata.add(errorSchema, {
  id: 'Error',
  description: `Every error, from the functions and from API Gateway alike. \`code\` is one of a closed set; \`status\` repeats the HTTP status; \`message\` is for people and never reveals internals.\n\n| code | status | meaning |\n|---|---|---|\n${errorTable}`,
  examples: [{ code: 'not_found', message: 'No pet has the id 42.', status: 404 }],
});
metadata.add(errorSchema.shape.code, { description: 'Machine-readable; one of the closed set in the table above.' });
metadata.add(errorSchema.shape.message, { description: 'Human-readable; may change at any time.' });
metadata.add(errorSchema.shape.status, { type: 'integer', description: 'The HTTP status code of the response.' });

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
