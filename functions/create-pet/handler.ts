import { idempotentCreate } from '../data/idempotent-create';
import { PetRepository } from '../data/pet-repository';
import { IdAllocator } from '../domain/id-allocator';
import { parseIdempotencyKey } from '../domain/idempotency-key';
import { type NewPet, newPetSchema, toPetBody } from '../domain/pet';
import { createPet } from '../domain/pets';
import { parseOrThrow } from '../domain/validation';
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

  return createApiHandler<unknown>('createPet', dependencies, { jsonBody: true }, async ({ event, body, caller, context }) => {
    const idempotencyKey = parseIdempotencyKey(header(event, 'Idempotency-Key'));
    const input = parseOrThrow(newPetSchema, body, 'request body');
    const pet = idempotencyKey ? await createOnce({ keyId: caller.keyId, idempotencyKey, pet: input }, context) : await create(input);
    // A replay comes back from the idempotency store: answer it in the very same shape.
    return jsonResponse(201, toPetBody(pet));
  });
}

export const handler = createHandler(dependenciesFromEnvironment());
