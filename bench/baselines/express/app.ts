import { getCurrentInvoke } from '@vendia/serverless-express';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { BaselineDependencies } from '../common/dependencies';
import {
  decodeCursor,
  deprecationHeaders,
  describeIssue,
  encodeCursor,
  getPet,
  idBlocks,
  insertPet,
  listPets,
  listQuerySchema,
  newPetSchema,
  type Pet,
  petIdSchema,
  SUNSET_AT_MS,
} from '../common/pets';
import { callerOf, countRequest } from '../common/rate-limit';

type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'not_found'
  | 'gone'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Baseline (b): one Express app for both routes, as a team would write it to
 * run behind @vendia/serverless-express: the same contract as the service for
 * GET /pets/{petId}, GET /pets and POST /pets.
 */
export function createApp(dependencies: BaselineDependencies): express.Express {
  const app = express();
  const nextId = idBlocks(dependencies.db, dependencies.tableNames.pets);

  const rateLimit: RequestHandler = async (_request, response, next) => {
    const { event } = getCurrentInvoke() as { event?: { requestContext?: { authorizer?: Record<string, unknown> } } };
    const caller = callerOf(event?.requestContext?.authorizer);
    if (!caller) {
      response.set('WWW-Authenticate', 'Bearer');
      throw new HttpError(401, 'unauthorized', 'Missing or invalid API key.');
    }
    const limit = await countRequest(dependencies.db, dependencies.tableNames.rateLimits, caller, Date.now());
    response.set(limit.headers);
    if (!limit.allowed) throw new HttpError(429, 'rate_limited', 'The per-minute limit is used up.');
    next();
  };

  const deprecated: RequestHandler = (request, response, next) => {
    response.set(deprecationHeaders(`${request.get('X-Forwarded-Proto') ?? 'https'}://${request.get('Host') ?? 'localhost'}/v1`));
    next();
  };

  const requireJson: RequestHandler = (request, _response, next) => {
    if (!request.is(['application/json', 'application/*+json']))
      throw new HttpError(415, 'unsupported_media_type', 'The request body must be sent with Content-Type: application/json.');
    next();
  };

  app.use((_request, response, next) => {
    response.set('Cache-Control', 'no-store');
    next();
  });
  // The usual place for the body parser: first, for every route. (Placed after an
  // async middleware it finds the request stream already finished and parses nothing.)
  app.use(express.json({ limit: '16kb', type: ['application/json', 'application/*+json'] }));

  app.get('/pets/:petId', deprecated, rateLimit, async (request, response) => {
    if (Date.now() >= SUNSET_AT_MS) throw new HttpError(410, 'gone', 'This operation was removed.');
    const petId = petIdSchema.safeParse(request.params.petId);
    if (!petId.success) throw new HttpError(400, 'invalid_request', 'petId must be an integer from 1 to 9007199254740991.');
    const pet = await getPet(dependencies.db, dependencies.tableNames.pets, petId.data);
    if (!pet) throw new HttpError(404, 'not_found', `Pet ${petId.data} was not found.`);
    response.json(pet);
  });

  app.get('/pets', rateLimit, listRoute(dependencies));

  app.post('/pets', rateLimit, requireJson, async (request, response) => {
    const input = newPetSchema.safeParse(request.body);
    if (!input.success) throw new HttpError(400, 'invalid_request', describeIssue(input.error));
    const pet: Pet = {
      id: await nextId(),
      name: input.data.name,
      categoryId: input.data.categoryId,
      status: input.data.status ?? 'available',
    };
    await insertPet(dependencies.db, dependencies.tableNames.pets, pet);
    response.status(201).json(pet);
  });

  app.use((_request, _response, next) => next(new HttpError(404, 'not_found', 'No such route.')));

  const errors: ErrorRequestHandler = (error, _request, response, _next) => {
    const known =
      error instanceof HttpError
        ? error
        : (error as { type?: string }).type === 'entity.too.large'
          ? new HttpError(413, 'payload_too_large', 'The request body is over 16 KiB.')
          : (error as { type?: string }).type === 'entity.parse.failed'
            ? new HttpError(400, 'invalid_request', 'The request body is not valid JSON.')
            : new HttpError(500, 'internal_error', 'An unexpected error occurred.');
    response.status(known.status).json({ code: known.code, message: known.message, status: known.status });
  };
  app.use(errors);
  return app;
}

/** GET /pets: a page of pets with a Link to the next one. */
function listRoute(dependencies: BaselineDependencies): RequestHandler {
  return async (request, response) => {
    const query = listQuerySchema.safeParse(request.query);
    if (!query.success) throw new HttpError(400, 'invalid_request', describeIssue(query.error));
    const afterId = query.data.cursor === undefined ? 0 : decodeCursor(query.data.cursor, query.data.status);
    if (afterId === undefined) throw new HttpError(400, 'invalid_request', 'cursor is invalid.');
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
      response.set(
        'Link',
        `<${request.get('X-Forwarded-Proto') ?? 'https'}://${request.get('Host') ?? 'localhost'}/v1/pets?${next}>; rel="next"`,
      );
    }
    response.json(page.pets);
  };
}
