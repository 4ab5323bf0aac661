import { z } from 'zod';
import { errorCodes } from '../definitions/error-codes';
import { DEFAULT_STATUS, MAX_ID, NAME_MAX_CODE_POINTS, newPetSchema, petStatusSchema } from '../definitions/fields/pet-fields';
import { bidiControl, controlCharacter, noncharacter, visibleCharacter } from '../definitions/fields/readable-text';
import type { JsonSchema } from '../definitions/operations/operation-contract';
import { errorObjectSchema, petSchema } from '../definitions/operations/pet-schemas';

/**
 * The JSON Schemas of the document, generated with zod's own z.toJSONSchema from
 * the schemas of the operation contracts (definitions/operations/), which the
 * handlers validate with. Where zod checks something with a
 * refinement or a transform (which has no JSON Schema form), the equivalent
 * keywords are attached here as metadata of that very zod schema; the tests in
 * test/unit/openapi-schemas.test.ts check that zod and the document accept and
 * refuse the same values, so these cannot drift apart silently either.
 */
export type { JsonSchema };

/** Where components live in the document; every $ref the generator writes points here. */
export const schemaRef = (id: string) => `#/components/schemas/${id}`;

/** The id of the Error object's schema: `Error` would shadow the global Error class in generated TypeScript. */
export const ERROR_SCHEMA_ID = 'ErrorObject';

/**
 * The name rule of definitions/fields/pet-fields.ts, written as character lists: patterns
 * keep to the regex subset JSON Schema recommends for interoperability (JSON
 * Schema 2020-12 Core, section 6.4 "Regular Expressions": characters, classes,
 * ranges, quantifiers, anchors, groups, alternation), which has no property
 * escapes such as \p{Cc}. So the lists are derived here, code point by code
 * point, from the server's own regular expressions: one source for the rule.
 * The lists hold only the Basic Multilingual Plane: a range of characters beyond
 * it is a pair of surrogates to engines that read patterns as UTF-16 (a JavaScript
 * RegExp without the u flag, Spectral's regex format check, .NET), where it is no
 * longer a valid range. Those characters (tag characters such as U+E0001, the
 * noncharacters U+1FFFE…U+10FFFF) and lone surrogates are refused by the server
 * and stated in the description; the pattern never refuses a name the server takes.
 */
function characterClass(inSet: (character: string) => boolean): string {
  const ranges: string[] = [];
  let first = -1;
  const close = (last: number) => {
    if (first < 0) return;
    ranges.push(first === last ? String.fromCodePoint(first) : `${String.fromCodePoint(first)}-${String.fromCodePoint(last)}`);
    first = -1;
  };
  for (let codePoint = 0; codePoint <= 0xffff; codePoint++) {
    const surrogate = codePoint >= 0xd800 && codePoint <= 0xdfff;
    if (!surrogate && inSet(String.fromCodePoint(codePoint))) {
      if (first < 0) first = codePoint;
    } else close(codePoint - 1);
  }
  close(0xffff);
  return ranges.join('');
}

/** Characters a name may not hold anywhere: controls, bidirectional override/isolate controls, noncharacters. */
export const REFUSED_CHARACTERS = characterClass((c) => controlCharacter.test(c) || bidiControl.test(c) || noncharacter.test(c));
/** Characters that do not count as the one visible character a name needs (a superset of the refused ones). */
export const INVISIBLE_CHARACTERS = characterClass((c) => !visibleCharacter.test(c));

/**
 * A name (decision 2): at least one visible character, at most 100
 * Unicode code points, none of the refused characters, well-formed Unicode.
 * JSON Schema counts string length in code points too.
 */
export const NAME_PATTERN = `^[^${REFUSED_CHARACTERS}]*[^${INVISIBLE_CHARACTERS}][^${REFUSED_CHARACTERS}]*$`;

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
  description: `The pet's name: 1 to ${NAME_MAX_CODE_POINTS} characters (Unicode code points), at least one of them visible (not whitespace, a format character or one Unicode marks as ignorable in display, such as zero-width characters; a private-use character or a code point not yet assigned counts as visible); no control characters, bidirectional override or isolate controls, or noncharacters; well-formed Unicode. The pattern states these rules for the Basic Multilingual Plane only; beyond it the server also refuses invisible characters and noncharacters (such as the tag characters U+E0000–U+E0FFF and U+1FFFE), and a lone surrogate (category Cs), with 400: rules a portable pattern cannot state.`,
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
metadata.add(petSchema.shape.id, {
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

/** A component or an inline schema lives inside the document: no dialect, no $id of its own. */
function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  return rest;
}
