// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { MAX_ID } from '../../functions/domain/pet';
import { defineOperation } from './operation-contract';
import { petSchema } from './pet-schemas';

/** petId is an integer from 1 to 2^53-1 written in plain decimal; anything else is a 400. */
export const petIdPathSchema = z
  .string()
  .regex(/^[1-9]\d{0,15}$/, `must be an integer from 1 to ${MAX_ID}`)
  .transform(Number)
  .refine((id) => id <= MAX_ID, `must be an integer from 1 to ${MAX_ID}`);

/** GET /pets/{petId} (deprecated: definitions/routes.ts holds its sunset). */
export const getPetContract = defineOperation({
  operationId: 'getPet',
  request: { path: z.object({ petId: petIdPathSchema }) },
  success: { status: 200, schema: petSchema, description: 'The pet.' },
  errorStatuses: [400, 404, 410],
});
