import { createPetContract } from '../../definitions/operations/create-pet';
import { idempotentCreate } from '../data/idempotent-create';
import { PetRepository } from '../data/pet-repository';
import { IdAllocator } from '../domain/id-allocator';
import { parseIdempotencyKey } from '../domain/idempotency-key';
import { type NewPet, toPetBody } from '../domain/pet';
import { createPet } from '../domain/pets';
import { createApiHandler } from '../http/api-handler';
import { header } from '../http/request';
import { jsonResponse } from '../http/responses';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';
import { recordPetCreated } from '../runtime/metrics';

export function createHandler(dependencies: Dependencies) {
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
  // One allocator per container: its id block outlives a single request.
  const ids = new IdAllocator((count) => pets.reserveIds(count));
  const create = async (input: NewPet) => {
    const pet = await createPet(input, { pets, ids, clock: dependencies.clock });
    recordPetCreated();
    return pet;
  };
  const createOnce = idempotentCreate(create, dependencies.db, dependencies.tableNames.idempotency);

  return createApiHandler(createPetContract, dependencies, async ({ event, body, caller, context }) => {
    const idempotencyKey = parseIdempotencyKey(header(event, 'Idempotency-Key'));
    const pet = idempotencyKey ? await createOnce({ keyId: caller.keyId, idempotencyKey, pet: body }, context) : await create(body);
    // A replay comes back from the idempotency store: answer it in the very same shape.
    return jsonResponse(201, toPetBody(pet));
  });
}

export const handler = createHandler(dependenciesFromEnvironment());
