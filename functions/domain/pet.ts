// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';

/** JSON-safe int64: the largest integer a JSON client can hold exactly. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const NAME_MAX_CODE_POINTS = 100;

export const petStatuses = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof petStatuses)[number];
export const DEFAULT_STATUS: PetStatus = 'available';

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

/** The Animal object of the interface, with its fields in their documented order. */
export function toPetBody(pet: Pet): Pet {
  return { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status };
}

/**
 * A character a person can see (a letter, mark, number, punctuation or symbol):
 * any character but whitespace, controls, format characters (U+200B, U+200D, a
 * BOM), lone surrogates, what Unicode calls ignorable in display (zero-width
 * characters, Hangul fillers, the combining grapheme joiner) and noncharacters.
 * Stated by exclusion so that characters newer than this runtime's Unicode
 * tables (next year's emoji) still count as visible, and so that the invisible
 * set is small and fixed enough to be listed character by character.
 */
export const visibleCharacter = /[^\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}]/u;
const controlCharacter = /\p{Cc}/u;
/**
 * Bidirectional embedding, override and isolate controls (U+202A–U+202E,
 * U+2066–U+2069) make a name display as something else (`abc\u202Eexe.txt`
 * shows as `abctxt.exe`).
 */
const bidiControl = /[\u202A-\u202E\u2066-\u2069]/u;
/** Noncharacters (U+FDD0–U+FDEF and U+xFFFE/U+xFFFF of every plane) are for a program's internal use, never for text. */
const noncharacter = /\p{Noncharacter_Code_Point}/u;

/**
 * Why a text that people read (a pet's name, an API key's owner) is unfit to be
 * shown, or undefined when it is fine. Lengths are each caller's own rule.
 */
export function unreadableTextReason(text: string): string | undefined {
  if (!text.isWellFormed()) return 'must be valid Unicode text';
  if (!visibleCharacter.test(text)) return 'must contain at least one visible character (a letter, mark, number, punctuation or symbol)';
  if (controlCharacter.test(text)) return 'must not contain control characters';
  if (bidiControl.test(text)) return 'must not contain bidirectional override or isolate controls (U+202A–U+202E, U+2066–U+2069)';
  if (noncharacter.test(text)) return 'must not contain Unicode noncharacters (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF)';
  return undefined;
}

const nameSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
  .superRefine((name, context) => {
    const reason = unreadableTextReason(name);
    if (reason) context.addIssue({ code: 'custom', message: reason });
  })
  .refine((name) => [...name].length <= NAME_MAX_CODE_POINTS, `must be at most ${NAME_MAX_CODE_POINTS} characters`);

const categoryIdSchema = z
  .number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be an integer') })
  .int('must be an integer')
  .min(1, `must be an integer from 1 to ${MAX_ID}`)
  .max(MAX_ID, `must be an integer from 1 to ${MAX_ID}`);

const statusSchema = z.enum(petStatuses, { error: `must be one of ${petStatuses.join(', ')}` });

/** The creation payload (decision 2): exactly these fields, nothing else. */
export const newPetSchema = z.strictObject(
  { name: nameSchema, categoryId: categoryIdSchema, status: statusSchema.optional() },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'The request body must be a JSON object') },
);

export type NewPet = z.infer<typeof newPetSchema>;
export const petStatusSchema = statusSchema;
