// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { petStatusSchema } from '../../functions/domain/pet';
import { defineOperation } from './operation-contract';
import { petSchema } from './pet-schemas';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const limitMessage = `must be an integer from 1 to ${MAX_LIMIT}`;

/** GET /pets: a page of pets in ascending id order, optionally of one status. */
export const listPetsContract = defineOperation({
  operationId: 'listPets',
  request: {
    query: z.object({
      limit: z
        .string()
        .regex(/^\d{1,3}$/, limitMessage)
        .transform(Number)
        .pipe(z.number().min(1, limitMessage).max(MAX_LIMIT, limitMessage))
        .default(DEFAULT_LIMIT),
      status: petStatusSchema.optional(),
      cursor: z.string().optional(),
    }),
  },
  success: { status: 200, schema: z.array(petSchema).max(MAX_LIMIT), description: 'A page of pets, in ascending id order.' },
  errorStatuses: [400],
  limits: { DEFAULT_LIMIT, MAX_LIMIT },
});
