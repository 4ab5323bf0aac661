import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';
import { deprecationHeaders, getPet, petIdSchema, SUNSET_AT_MS } from '../common/pets';
import { callerOf, countRequest } from '../common/rate-limit';
import { error, json, stageUrl } from './http';

/** Baseline (a): GET /pets/{petId} as one plain Lambda handler, no framework. */
export function createHandler(dependencies: BaselineDependencies) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const deprecation = deprecationHeaders(stageUrl(event));
    try {
      const caller = callerOf(event.requestContext.authorizer);
      if (!caller) return error(401, 'Missing or invalid API key.', { ...deprecation, 'WWW-Authenticate': 'Bearer' });
      const limit = await countRequest(dependencies.db, dependencies.tableNames.rateLimits, caller, Date.now());
      const headers = { ...deprecation, ...limit.headers };
      if (!limit.allowed) return error(429, 'The per-minute limit is used up.', headers);
      if (Date.now() >= SUNSET_AT_MS) return error(410, 'This operation was removed.', headers);
      const petId = petIdSchema.safeParse(event.pathParameters?.petId);
      if (!petId.success) return error(400, 'petId must be an integer from 1 to 9007199254740991.', headers);
      const pet = await getPet(dependencies.db, dependencies.tableNames.pets, petId.data);
      return pet ? json(200, pet, headers) : error(404, `Pet ${petId.data} was not found.`, headers);
    } catch {
      return error(500, 'An unexpected error occurred.', deprecation);
    }
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
