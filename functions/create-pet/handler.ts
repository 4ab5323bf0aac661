import { PetRepository } from '../data/pet-repository';
import { IdAllocator } from '../domain/id-allocator';
import { newPetSchema } from '../domain/pet';
import { createPet } from '../domain/pets';
import { parseOrThrow } from '../domain/validation';
import { createApiHandler } from '../http/api-handler';
import { jsonResponse } from '../http/responses';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';

export function createHandler(dependencies: Dependencies) {
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
  // One allocator per container: its id block outlives a single request.
  const ids = new IdAllocator((count) => pets.reserveIds(count));
  return createApiHandler<unknown>('createPet', dependencies, { jsonBody: true }, async ({ body }) => {
    const input = parseOrThrow(newPetSchema, body, 'request body');
    const pet = await createPet(input, { pets, ids, clock: dependencies.clock });
    return jsonResponse(201, pet);
  });
}

export const handler = createHandler(dependenciesFromEnvironment());
