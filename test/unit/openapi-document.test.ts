import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCodes } from '../../definitions/error-codes';
import { petStatuses } from '../../definitions/fields/pet-fields';
import { routes } from '../../definitions/routes';
import { buildOpenApiDocument, type OperationObject } from '../../openapi/build-document';
import { CLIENT_TYPES_PATH, DOCUMENT_PATH, projectRoot, renderDocument } from '../../openapi/contract-files';

/**
 * The OpenAPI document is generated (npm run openapi) from the route table, the
 * error codes, the gateway responses and the zod schemas, and committed so that
 * tools and clients can read it. These tests fail when the committed files
 * differ from what the generator produces now, and pin what it must say.
 */
const committed = (path: string) => readFileSync(join(projectRoot, path), 'utf8');
const document = buildOpenApiDocument();
const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
const operation = (operationId: string) => operations.find((candidate) => candidate.operationId === operationId) as OperationObject;

describe('the committed files are what the generator produces (run `npm run openapi` after a change)', () => {
  it(`${DOCUMENT_PATH} is up to date`, () => {
    expect(committed(DOCUMENT_PATH)).toBe(renderDocument());
  });

  it(`${CLIENT_TYPES_PATH} is up to date (the generator's own --check)`, () => {
    // openapi-typescript loads ESM-only dependencies, which jest's module system cannot:
    // run the generator in its own process.
    const run = spawnSync(process.execPath, [require.resolve('tsx/cli'), 'openapi/generate.ts', '--check'], {
      cwd: projectRoot,
      encoding: 'utf8',
    });
    expect(`${run.stdout}${run.stderr}`).toContain(`${CLIENT_TYPES_PATH}: up to date`);
    expect(run.status).toBe(0);
  });

  it('goes stale when a zod schema changes and the document is not regenerated', () => {
    jest.isolateModules(() => {
      jest.doMock('../../definitions/fields/pet-fields', () => {
        const actual = jest.requireActual<typeof import('../../definitions/fields/pet-fields')>('../../definitions/fields/pet-fields');
        // As if someone allowed a new optional field in the creation payload.
        return { ...actual, newPetSchema: actual.newPetSchema.extend({ nickname: actual.newPetSchema.shape.name.optional() }) };
      });
      const { renderDocument: renderChanged } =
        jest.requireActual<typeof import('../../openapi/contract-files')>('../../openapi/contract-files');
      const changed = renderChanged();
      expect(changed).not.toBe(committed(DOCUMENT_PATH));
      expect(JSON.parse(changed).components.schemas.NewPet.properties).toHaveProperty('nickname');
    });
    jest.dontMock('../../definitions/fields/pet-fields');
  });
});

describe('what the document says', () => {
  it('is OpenAPI 3.1 with distinct servers, each usable as it is written: a deployed stage, a custom domain, npm start', () => {
    expect(document.openapi).toBe('3.1.0');
    const servers = document.servers as { url: string; variables?: Record<string, { default: string }> }[];
    const urls = servers.map((server) => server.url);
    expect(new Set(urls).size).toBe(urls.length);
    expect(urls).toEqual([
      'https://{restApiId}.execute-api.{region}.amazonaws.com/v1',
      'https://{domainName}/v1',
      'http://localhost:3000/v1',
    ]);
    for (const server of servers) {
      // Every variable the template names has a default, so a generator can use the URL as it is.
      const named = [...server.url.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
      expect(Object.keys(server.variables ?? {}).sort()).toEqual(named.sort());
      const resolved = server.url.replace(/\{(\w+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? '');
      expect(new URL(resolved).pathname).toBe('/v1');
      // Reference pages show server descriptions as plain text: no markdown in them.
      expect((server as { description?: string }).description).not.toMatch(/[`*_]/);
    }
  });

  it('has exactly the operations of the route table, each with bearer security', () => {
    expect(operations.map((candidate) => candidate.operationId).sort()).toEqual(routes.map((route) => route.operationId).sort());
    for (const route of routes) {
      const found = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(found?.operationId).toBe(route.operationId);
      expect(found?.security).toEqual([{ bearerAuth: [] }]);
    }
    expect(document.components).toMatchObject({ securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } });
  });

  it('marks getPet deprecated, with its sunset, and documents Deprecation, Sunset and Link on its responses', () => {
    const getPet = operation('getPet');
    expect(getPet).toMatchObject({ deprecated: true, 'x-sunset': '2030-12-05T00:00:00Z', 'x-deprecated-at': '2026-01-01T00:00:00Z' });
    expect(getPet.description).toContain('Deprecated');
    for (const status of ['200', '400', '404', '410']) {
      expect(getPet.responses[status]?.headers).toMatchObject({
        Deprecation: { required: true, schema: { const: '@1767225600' } },
        Sunset: { required: true, schema: { const: 'Thu, 05 Dec 2030 00:00:00 GMT' } },
        Link: { required: true },
      });
    }
    expect(operation('listPets').deprecated).toBeUndefined();
  });

  it('requires the rate-limit headers on every answer of the functions, and documents Retry-After, Link and WWW-Authenticate where they come', () => {
    const rateLimit = {
      'X-RateLimit-Limit': { required: true },
      'X-RateLimit-Remaining': { required: true },
      'X-RateLimit-Reset': { required: true },
    };
    expect(operation('listPets').responses['200']?.headers).toMatchObject({ ...rateLimit, Link: { required: false } });
    expect(operation('createPet').responses['201']?.headers).toMatchObject(rateLimit);
    for (const candidate of operations) {
      expect(candidate.responses['400']?.headers).toMatchObject(rateLimit);
      expect(candidate.responses['401']?.headers).toMatchObject({ 'WWW-Authenticate': { required: true, schema: { const: 'Bearer' } } });
      expect(candidate.responses['401']?.headers).not.toHaveProperty('X-RateLimit-Limit');
      expect(candidate.responses['429']?.headers).toMatchObject({ 'Retry-After': { required: true }, 'X-RateLimit-Limit': {} });
      expect(candidate.responses['503']?.headers).toMatchObject({
        'Retry-After': { required: true },
        'X-RateLimit-Limit': { required: false },
      });
    }
    expect(operation('createPet').responses['409']?.headers).toMatchObject({ 'Retry-After': { required: true } });
  });

  it('documents the Idempotency-Key header and the answers it leads to on createPet', () => {
    const createPet = operation('createPet');
    expect(createPet.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }));
    // The rule as idempotencyKeySchema has it: a space is not allowed ("printable ASCII" would include it).
    const idempotencyKey = (createPet.parameters as { name: string; description: string }[]).find(({ name }) => name === 'Idempotency-Key');
    expect(idempotencyKey?.description).toContain('1 to 255 visible ASCII characters');
    expect(idempotencyKey?.description).toContain('U+0021–U+007E');
    expect(idempotencyKey?.description).not.toMatch(/printable/i);
    expect(Object.keys(createPet.responses)).toEqual(expect.arrayContaining(['201', '400', '409', '413', '415', '422', '429', '503']));
  });

  it('documents pagination: limit, status, the opaque cursor, at most 100 pets a page, and the next cursor as a typed header', () => {
    const parameters = operation('listPets').parameters as { name: string; in: string; schema: Record<string, unknown> }[];
    expect(parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual(['query:limit', 'query:status', 'query:cursor']);
    expect(parameters[0]?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    const page = operation('listPets').responses['200'];
    expect(page?.content?.['application/json']?.schema).toMatchObject({ type: 'array', maxItems: 100 });
    expect(page?.headers).toMatchObject({ Link: { required: false }, 'X-Next-Cursor': { required: false, schema: { type: 'string' } } });
  });

  it('says what the server does: +json bodies accepted, no suspended key in a 401, deprecation headers only from the function, a 403 no operation answers', () => {
    const createPet = operation('createPet');
    expect(Object.keys((createPet.requestBody as { content: object }).content)).toEqual(['application/json', 'application/*+json']);
    const text = JSON.stringify(document);
    for (const candidate of operations)
      expect(candidate.responses['401']?.description).not.toMatch(/revoked or suspended|suspended key gets 401/);
    expect(JSON.stringify(document.components)).not.toMatch(/revoked or suspended/);
    expect(operation('getPet').description).toContain("Every response of this operation's function carries");
    for (const candidate of operations) expect(candidate.responses).not.toHaveProperty('403');
    expect(text).toContain('no operation of this API answers 403 today');
  });

  it('holds the closed set of error codes and the pet statuses', () => {
    const schemas = (
      document.components as { schemas: Record<string, { properties: Record<string, { enum: unknown[] }>; enum?: unknown[] }> }
    ).schemas;
    expect(schemas).not.toHaveProperty('Error');
    expect(schemas.ErrorObject?.properties.code?.enum).toEqual(Object.keys(errorCodes));
    expect(schemas.PetStatus?.enum).toEqual([...petStatuses]);
    // Every error response narrows the Error object to its own codes.
    for (const candidate of operations) {
      for (const [status, response] of Object.entries(candidate.responses)) {
        if (Number(status) < 400) continue;
        const codes = Object.entries(errorCodes)
          .filter(([, entry]) => entry.status === Number(status))
          .map(([code]) => code);
        const narrowed = (response.content?.['application/json']?.schema.allOf as Record<string, { code: unknown }>[] | undefined)?.[1]
          ?.properties;
        expect(narrowed?.code).toEqual(codes.length === 1 ? { const: codes[0] } : { enum: codes });
      }
    }
  });

  it('documents what unknown routes get: 404 not_found from API Gateway', () => {
    expect(document['x-unknown-route-response']).toMatchObject({ 'x-status': 404 });
  });
});
