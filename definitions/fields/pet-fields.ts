// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { readableTextReason } from './readable-text';

/**
 * The fields of a pet as the contract states them: the operation contracts
 * (definitions/operations/) validate and document requests with these schemas,
 * and functions/domain/pet.ts builds on them. They live in definitions/ so that
 * the contracts import nothing of functions/.
 */

/** JSON-safe int64: the largest integer a JSON client can hold exactly. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const NAME_MAX_CODE_POINTS = 100;

export const petStatuses = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof petStatuses)[number];
export const DEFAULT_STATUS: PetStatus = 'available';

const nameSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
  .superRefine((name, context) => {
    const reason = readableTextReason(name, NAME_MAX_CODE_POINTS);
    if (reason) context.addIssue({ code: 'custom', message: reason });
  });

const categoryIdSchema = z
  .number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be an integer') })
  .int('must be an integer')
  .min(1, `must be an integer from 1 to ${MAX_ID}`)
  .max(MAX_ID, `must be an integer from 1 to ${MAX_ID}`);

export const petStatusSchema = z.enum(petStatuses, { error: `must be one of ${petStatuses.join(', ')}` });

/** The creation payload (decision 2): exactly these fields, nothing else. */
export const newPetSchema = z.strictObject(
  { name: nameSchema, categoryId: categoryIdSchema, status: petStatusSchema.optional() },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'The request body must be a JSON object') },
);

export type NewPet = z.infer<typeof newPetSchema>;
