// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { PetRepository } from '../data/pet-repository';
import { petStatusSchema } from '../domain/pet';
import { listPets } from '../domain/pets';
import { parseOrThrow } from '../domain/validation';
import { createApiHandler } from '../http/api-handler';
import { stageBaseUrl } from '../http/request';
import { jsonResponse } from '../http/responses';
import { type Dependencies, dependenciesFromEnvironment } from '../runtime/dependencies';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** Query parameters of GET /pets (decision 4); unknown parameters are ignored. */
export const listPetsQuerySchema = z.object({
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `must be an integer from 1 to ${MAX_LIMIT}`)
    .transform(Number)
    .pipe(z.number().min(1, `must be an integer from 1 to ${MAX_LIMIT}`).max(MAX_LIMIT, `must be an integer from 1 to ${MAX_LIMIT}`))
    .default(DEFAULT_LIMIT),
  status: petStatusSchema.optional(),
  cursor: z.string().optional(),
});

export function createHandler(dependencies: Dependencies) {
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
  return createApiHandler('listPets', dependencies, { jsonBody: false }, async ({ event }) => {
    const query = parseOrThrow(listPetsQuerySchema, event.queryStringParameters ?? {}, 'query');
    const page = await listPets(query, { pets, clock: dependencies.clock });
    const headers: Record<string, string> = {};
    if (page.nextCursor) {
      const next = new URLSearchParams({ limit: String(query.limit) });
      if (query.status) next.set('status', query.status);
      next.set('cursor', page.nextCursor);
      headers.Link = `<${stageBaseUrl(event)}/pets?${next}>; rel="next"`;
    }
    return jsonResponse(200, page.pets, headers);
  });
}

export const handler = createHandler(dependenciesFromEnvironment());
