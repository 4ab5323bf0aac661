import { listPetsContract } from '../../definitions/operations/list-pets';
import { BlockCounter } from '../data/block-counter';
import { petLayout } from '../data/pet-layout';
import { PetRepository } from '../data/pet-repository';
import { PetList } from '../domain/pet-list';
import { listPets } from '../domain/pets';
import { createApiHandler } from '../http/api-handler';
import { stageBaseUrl } from '../http/request';
import { jsonResponse } from '../http/responses';
import { CounterTable } from '../rate-limit';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';
import { perPetNamespace } from '../runtime/pet-namespaces';

export function createHandler(dependencies: Dependencies) {
  const { db, tableNames, clock } = dependencies;
  const layout = dependencies.petLayout ?? petLayout;
  const counter = new BlockCounter(db, tableNames.pets, layout);
  // One per container and namespace: its views of the lists outlive a single request.
  const listFor = perPetNamespace(
    (namespace) => new PetList(new PetRepository(db, tableNames.pets, { layout, namespace }), counter, { layout, clock }),
  );
  return createApiHandler(
    listPetsContract,
    dependencies,
    new CounterTable(dependencies.db, dependencies.tableNames.rateLimits),
    async ({ event, query, caller }) => {
      const page = await listPets(query, { list: listFor(caller.keyId), clock });
      const headers: Record<string, string> = {};
      if (page.nextCursor) {
        // Each part is URL-safe as it is (an integer, a status name, an unpadded base64url cursor: the contract's
        // patterns), so no URLSearchParams per page.
        const next = `limit=${query.limit}${query.status ? `&status=${query.status}` : ''}&cursor=${page.nextCursor}`;
        headers.Link = `<${stageBaseUrl(event)}/pets?${next}>; rel="next"`;
        // The same cursor on its own, for clients generated from the OpenAPI document (typed, no URL to parse).
        headers['X-Next-Cursor'] = page.nextCursor;
      }
      return jsonResponse(200, page.pets, headers);
    },
  );
}

export const handler = createHandler(dependenciesFromEnvironment());
