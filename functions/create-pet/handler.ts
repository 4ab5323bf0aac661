import { createPetContract, IDEMPOTENCY_TTL_SECONDS } from '../../definitions/operations/create-pet';
import { functionTimeoutSeconds } from '../../definitions/routes';
import { BlockCounter } from '../data/block-counter';
import { IdempotencyRepository } from '../data/idempotency-repository';
import { petLayout } from '../data/pet-layout';
import { PetRepository } from '../data/pet-repository';
import { IdAllocator } from '../domain/id-allocator';
import { toPetBody } from '../domain/pet';
import { PetCreation } from '../domain/pet-creation';
import { createApiHandler } from '../http/api-handler';
import { stageBaseUrl } from '../http/request';
import { jsonResponse } from '../http/responses';
import { CounterTable } from '../rate-limit';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';
import { recordPetCreated } from '../runtime/metrics';
import { perPetNamespace } from '../runtime/pet-namespaces';

export function createHandler(dependencies: Dependencies) {
  const { clock, db, tableNames } = dependencies;
  const layout = dependencies.petLayout ?? petLayout;
  const blocks = new BlockCounter(db, tableNames.pets, layout);
  // One allocator per container: its id block outlives a single request, not its lifetime (pet-layout.ts).
  const ids = new IdAllocator((count) => blocks.reserveIds(count), layout.blockSize, { clock, lifetimeMs: layout.blockLifetimeMs });
  const records = new IdempotencyRepository(db, tableNames.idempotency, clock);
  const creationFor = perPetNamespace(
    (namespace) =>
      new PetCreation({
        pets: new PetRepository(db, tableNames.pets, { layout, namespace }),
        records,
        ids,
        clock,
        holdMs: functionTimeoutSeconds * 1000,
        ttlSeconds: IDEMPOTENCY_TTL_SECONDS,
      }),
  );

  return createApiHandler(
    createPetContract,
    dependencies,
    new CounterTable(db, tableNames.rateLimits),
    async ({ event, headers, body, caller }) => {
      const { pet, created } = await creationFor(caller.keyId).create(body, {
        keyId: caller.keyId,
        idempotencyKey: headers['Idempotency-Key'],
      });
      // A replay answers with an earlier attempt's pet: not a pet created now.
      if (created) recordPetCreated(caller.keyId);
      // RFC 9110, section 15.3.2: a 201 names the created resource.
      return jsonResponse(201, toPetBody(pet), { Location: `${stageBaseUrl(event)}/pets/${pet.id}` });
    },
  );
}

export const handler = createHandler(dependenciesFromEnvironment());
