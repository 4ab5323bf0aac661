import { getPetContract } from '../../definitions/operations/get-pet';
import { PetRepository } from '../data/pet-repository';
import { RateLimitRepository } from '../data/rate-limit-repository';
import { findPet } from '../domain/pets';
import { createApiHandler } from '../http/api-handler';
import { jsonResponse } from '../http/responses';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';

export function createHandler(dependencies: Dependencies) {
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets, { layout: dependencies.petLayout });
  return createApiHandler(
    getPetContract,
    dependencies,
    new RateLimitRepository(dependencies.db, dependencies.tableNames.rateLimits),
    async ({ path }) => {
      return jsonResponse(200, await findPet(path.petId, { pets, clock: dependencies.clock }));
    },
  );
}

export const handler = createHandler(dependenciesFromEnvironment());
