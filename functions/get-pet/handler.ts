// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { PetRepository } from '../data/pet-repository';
import { MAX_ID } from '../domain/pet';
import { findPet } from '../domain/pets';
import { parseOrThrow } from '../domain/validation';
import { createApiHandler } from '../http/api-handler';
import { jsonResponse } from '../http/responses';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';

/** petId is an integer from 1 to 2^53-1 written in plain decimal; anything else is a 400. */
export const petIdSchema = z
  .string()
  .regex(/^[1-9]\d{0,15}$/, `must be an integer from 1 to ${MAX_ID}`)
  .transform(Number)
  .refine((id) => id <= MAX_ID, `must be an integer from 1 to ${MAX_ID}`);

/** Built once: zod compiles each object schema, which would cost every request. */
const pathSchema = z.object({ petId: petIdSchema });

export function createHandler(dependencies: Dependencies) {
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
  return createApiHandler('getPet', dependencies, { jsonBody: false }, async ({ event }) => {
    const { petId } = parseOrThrow(pathSchema, event.pathParameters ?? {}, 'path');
    return jsonResponse(200, await findPet(petId, { pets, clock: dependencies.clock }));
  });
}

export const handler = createHandler(dependenciesFromEnvironment());
