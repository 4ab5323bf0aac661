import { createPetContract } from '../../definitions/operations/create-pet';
import { functionTimeoutSeconds } from '../../definitions/routes';
import { IdempotentCreate } from '../data/idempotent-create';
import { PetRepository } from '../data/pet-repository';
import { RateLimitRepository } from '../data/rate-limit-repository';
import { IdAllocator } from '../domain/id-allocator';
import { type NewPet, toPetBody } from '../domain/pet';
import { createPet, draftPet } from '../domain/pets';
import { createApiHandler } from '../http/api-handler';
import { stageBaseUrl } from '../http/request';
import { jsonResponse } from '../http/responses';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';
import { recordPetCreated } from '../runtime/metrics';

export function createHandler(dependencies: Dependencies) {
  const { clock } = dependencies;
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
  // One allocator per container: its id block outlives a single request.
  const ids = new IdAllocator((count) => pets.reserveIds(count));
  const createOnce = new IdempotentCreate(
    dependencies.db,
    dependencies.tableNames.idempotency,
    (input) => draftPet(input, { ids, clock }),
    (draft, writeToken) => pets.insert(draft.pet, draft.createdAt, writeToken),
    clock,
    functionTimeoutSeconds * 1000,
  );
  /** Creates the pet, or returns the one of an earlier attempt with the same Idempotency-Key. */
  const create = async (input: NewPet, idempotencyKey: string | undefined, keyId: string) => {
    if (!idempotencyKey) {
      const pet = await createPet(input, { pets, ids, clock });
      recordPetCreated();
      return pet;
    }
    const { pet, drafted } = await createOnce.create({ keyId, idempotencyKey, pet: input });
    // A replay answers with an earlier attempt's pet: not a pet created now.
    if (drafted) recordPetCreated();
    return pet;
  };

  return createApiHandler(
    createPetContract,
    dependencies,
    new RateLimitRepository(dependencies.db, dependencies.tableNames.rateLimits),
    async ({ event, headers, body, caller }) => {
      const pet = await create(body, headers['Idempotency-Key'], caller.keyId);
      // RFC 9110, section 15.3.2: a 201 names the created resource.
      return jsonResponse(201, toPetBody(pet), { Location: `${stageBaseUrl(event)}/pets/${pet.id}` });
    },
  );
}

export const handler = createHandler(dependenciesFromEnvironment());
