import { getPetContract } from '../../definitions/operations/get-pet';
import { PetRepository } from '../data/pet-repository';
import { findPet } from '../domain/pets';
import { createApiHandler } from '../http/api-handler';
import { jsonResponse } from '../http/responses';
import { CounterTable } from '../rate-limit';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';
import { perPetNamespace } from '../runtime/pet-namespaces';

export function createHandler(dependencies: Dependencies) {
  const petsFor = perPetNamespace(
    (namespace) => new PetRepository(dependencies.db, dependencies.tableNames.pets, { layout: dependencies.petLayout, namespace }),
  );
  return createApiHandler(
    getPetContract,
    dependencies,
    new CounterTable(dependencies.db, dependencies.tableNames.rateLimits),
    async ({ path, caller }) => {
      return jsonResponse(200, await findPet(path.petId, { pets: petsFor(caller.keyId), clock: dependencies.clock }));
    },
  );
}

export const handler = createHandler(dependenciesFromEnvironment());
