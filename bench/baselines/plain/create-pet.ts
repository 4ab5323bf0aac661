import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';
import { describeIssue, idBlocks, insertPet, newPetSchema, type Pet } from '../common/pets';
import { callerOf, countRequest } from '../common/rate-limit';
import { error, header, json } from './http';

const MAX_BODY_BYTES = 16 * 1024;

/** Baseline (a): POST /pets as one plain Lambda handler, no framework. */
export function createHandler(dependencies: BaselineDependencies) {
  const nextId = idBlocks(dependencies.db, dependencies.tableNames.pets);
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    try {
      const caller = callerOf(event.requestContext.authorizer);
      if (!caller) return error(401, 'Missing or invalid API key.', { 'WWW-Authenticate': 'Bearer' });
      const limit = await countRequest(dependencies.db, dependencies.tableNames.rateLimits, caller, Date.now());
      const headers = limit.headers;
      if (!limit.allowed) return error(429, 'The per-minute limit is used up.', headers);
      const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
      if (Buffer.byteLength(raw) > MAX_BODY_BYTES) return error(413, 'The request body is over 16 KiB.', headers);
      if (!raw) return error(400, 'A JSON request body is required.', headers);
      if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i.test(header(event, 'Content-Type') ?? '')) {
        return error(415, 'The request body must be sent with Content-Type: application/json.', headers);
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return error(400, 'The request body is not valid JSON.', headers);
      }
      const input = newPetSchema.safeParse(body);
      if (!input.success) return error(400, describeIssue(input.error), headers);
      const pet: Pet = {
        id: await nextId(),
        name: input.data.name,
        categoryId: input.data.categoryId,
        status: input.data.status ?? 'available',
      };
      await insertPet(dependencies.db, dependencies.tableNames.pets, pet);
      return json(201, pet, headers);
    } catch {
      return error(500, 'An unexpected error occurred.');
    }
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
