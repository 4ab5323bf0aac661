import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';
import { decodeCursor, describeIssue, encodeCursor, listPets, listQuerySchema } from '../common/pets';
import { callerOf, countRequest } from '../common/rate-limit';
import { error, json, stageUrl } from './http';

/** Baseline (a): GET /pets as one plain Lambda handler, no framework: count the request, then query a page. */
export function createHandler(dependencies: BaselineDependencies) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    try {
      const caller = callerOf(event.requestContext.authorizer);
      if (!caller) return error(401, 'Missing or invalid API key.', { 'WWW-Authenticate': 'Bearer' });
      const limit = await countRequest(dependencies.db, dependencies.tableNames.rateLimits, caller, Date.now());
      const headers = limit.headers;
      if (!limit.allowed) return error(429, 'The per-minute limit is used up.', headers);
      const query = listQuerySchema.safeParse(event.queryStringParameters ?? {});
      if (!query.success) return error(400, describeIssue(query.error), headers);
      const afterId = query.data.cursor === undefined ? 0 : decodeCursor(query.data.cursor, query.data.status);
      if (afterId === undefined) return error(400, 'cursor is invalid.', headers);
      const page = await listPets(dependencies.db, dependencies.tableNames.pets, {
        afterId,
        limit: query.data.limit,
        status: query.data.status,
      });
      const last = page.pets.at(-1);
      if (page.hasMore && last) {
        const next = new URLSearchParams({
          limit: String(query.data.limit),
          ...(query.data.status ? { status: query.data.status } : {}),
          cursor: encodeCursor(last.id, query.data.status),
        });
        headers.Link = `<${stageUrl(event)}/pets?${next}>; rel="next"`;
      }
      return json(200, page.pets, headers);
    } catch {
      return error(500, 'An unexpected error occurred.');
    }
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
