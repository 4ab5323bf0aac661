import { listPetsContract } from '../../definitions/operations/list-pets';
import { PetRepository } from '../data/pet-repository';
import { RateLimitRepository } from '../data/rate-limit-repository';
import { listPets } from '../domain/pets';
import { createApiHandler } from '../http/api-handler';
import { stageBaseUrl } from '../http/request';
import { jsonResponse } from '../http/responses';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';

export function createHandler(dependencies: Dependencies) {
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets, {
    clock: dependencies.clock,
    layout: dependencies.petLayout,
  });
  return createApiHandler(
    listPetsContract,
    dependencies,
    new RateLimitRepository(dependencies.db, dependencies.tableNames.rateLimits),
    async ({ event, query }) => {
      const page = await listPets(query, { pets, clock: dependencies.clock });
      const headers: Record<string, string> = {};
      if (page.nextCursor) {
        const next = new URLSearchParams({ limit: String(query.limit) });
        if (query.status) next.set('status', query.status);
        next.set('cursor', page.nextCursor);
        headers.Link = `<${stageBaseUrl(event)}/pets?${next}>; rel="next"`;
        // The same cursor on its own, for clients generated from the OpenAPI document (typed, no URL to parse).
        headers['X-Next-Cursor'] = page.nextCursor;
      }
      return jsonResponse(200, page.pets, headers);
    },
  );
}

export const handler = createHandler(dependenciesFromEnvironment());
