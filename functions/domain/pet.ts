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

const hasNonWhitespace = /[^\p{White_Space}]/u;
const controlCharacter = /\p{Cc}/u;

const nameSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
  .refine((name) => name.isWellFormed(), 'must be valid Unicode text')
  .refine((name) => hasNonWhitespace.test(name), 'must contain at least one non-whitespace character')
  .refine((name) => [...name].length <= NAME_MAX_CODE_POINTS, `must be at most ${NAME_MAX_CODE_POINTS} characters`)
  .refine((name) => !controlCharacter.test(name), 'must not contain control characters');

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
