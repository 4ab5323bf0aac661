// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { errorCodes } from '../error-codes';
import { MAX_ID, newPetSchema, petStatusSchema } from '../fields/pet-fields';

/**
 * The bodies the API sends, as zod schemas. functions/ builds pets with
 * toPetBody and errors with errorResponse; these describe those bodies for the
 * contract. A Pet is composed from the creation payload's own field schemas:
 * the response can never allow a name the creation payload refuses, or the reverse.
 */
export const petSchema = z.strictObject({
  id: z.int().min(1).max(MAX_ID),
  name: newPetSchema.shape.name,
  categoryId: newPetSchema.shape.categoryId,
  status: petStatusSchema,
});

/** The Error object; `code` is the closed set of definitions/error-codes.ts. */
const errorCodeNames = Object.keys(errorCodes) as [keyof typeof errorCodes, ...(keyof typeof errorCodes)[]];
const errorStatuses = [...new Set(Object.values(errorCodes).map((entry) => entry.status))].sort((a, b) => a - b);
export const errorObjectSchema = z.strictObject({
  code: z.enum(errorCodeNames),
  message: z.string(),
  status: z.literal(errorStatuses),
});
