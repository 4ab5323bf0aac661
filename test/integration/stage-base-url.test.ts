import type { APIGatewayProxyEvent } from 'aws-lambda';
import { PetRepository } from '../../functions/data/pet-repository';
import { decodeCursor } from '../../functions/domain/cursor';
import { createHandler as createGetPet } from '../../functions/get-pet/handler';
import { stageBaseUrl } from '../../functions/http/request';
import { createHandler as createListPets } from '../../functions/list-pets/handler';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { EXECUTE_API_DOMAIN, lambdaContext, type RestRequest, restProxyEvent } from '../support/api-gateway-events';
import { asFunction, beforeGetPetSunset, createTestTables, testDependencies } from '../support/dynamo';

/**
 * Absolute URLs (Link rel="next", rel="successor-version") must be the URL the
 * client called, whichever way it reached API Gateway. The events below have
 * the shape API Gateway sends to a Lambda proxy integration (payload 1.0):
 * "Lambda proxy integrations in API Gateway", input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#api-gateway-simple-proxy-for-lambda-input-format
 * with requestContext.domainName ("the full domain name used to invoke the
 * API"), requestContext.path (the request path, the stage or base path
 * included) and resourcePath from "Variables for data transformations for API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html.
 * Behind a custom domain with a base path mapping, the top-level `path` holds
 * the base path too (`/v1/pets`), unlike on execute-api (`/pets`).
 */
interface Arrival {
  domainName: string;
  /** The top-level `path`. */
  path: string;
  /** requestContext.path. */
  requestPath: string;
}

const viaExecuteApi = (resourcePathWithValues: string): Arrival => ({
  domainName: EXECUTE_API_DOMAIN,
  path: resourcePathWithValues,
  requestPath: `/v1${resourcePathWithValues}`,
});
const viaCustomDomain = (resourcePathWithValues: string): Arrival => ({
  domainName: 'api.example.com',
  path: `/v1${resourcePathWithValues}`,
  requestPath: `/v1${resourcePathWithValues}`,
});

/** Headers a client controls: none of them may end up in a URL we build. */
const forgedHeaders = { Host: 'evil.example', 'X-Forwarded-Proto': 'javascript', 'X-Forwarded-Host': 'evil.example' };
const caller = { keyId: 'key_1', customerId: 'key_1', plan: 'business', perMinute: '600', perDay: '100000', principalId: 'key_1' };

function awsEvent(arrival: Arrival, resource: string, request: Pick<RestRequest, 'pathParameters' | 'query'> = {}): APIGatewayProxyEvent {
  return restProxyEvent({
    method: 'GET',
    resource,
    ...request,
    path: arrival.path,
    domainName: arrival.domainName,
    requestPath: arrival.requestPath,
    headers: forgedHeaders,
    authorizer: caller,
  });
}

let dependencies: Dependencies;

beforeAll(async () => {
  // getPet works only before its sunset: a clock before it, whatever today's date.
  dependencies = testDependencies(await createTestTables(), () => beforeGetPetSunset);
  const pets = new PetRepository(dependencies.db, dependencies.tableNames.pets);
  for (const id of [1, 2]) await pets.insert({ id, name: `Pet ${id}`, categoryId: 1, status: 'available' }, new Date().toISOString());
});
afterAll(() => dependencies.db.destroy());

describe('Link headers built from the request context', () => {
  const listPage = (arrival: Arrival) => awsEvent(arrival, '/pets', { query: { limit: '1' } });

  it.each([
    ['a custom domain with base path v1', viaCustomDomain('/pets'), 'https://api.example.com/v1/pets?limit=1&cursor='],
    ['the execute-api URL (stage v1)', viaExecuteApi('/pets'), `https://${EXECUTE_API_DOMAIN}/v1/pets?limit=1&cursor=`],
  ])('listPets through %s links rel="next" to the URL the client used', async (_name, arrival, expected) => {
    const result = await createListPets(asFunction('listPets', dependencies))(listPage(arrival), lambdaContext());
    expect(result.statusCode).toBe(200);
    const link = String(result.headers?.Link);
    expect(link.startsWith(`<${expected}`)).toBe(true);
    expect(link.endsWith('>; rel="next"')).toBe(true);
  });

  it.each([
    ['a custom domain with base path v1', viaCustomDomain('/pets/1'), 'https://api.example.com/v1/pets'],
    ['the execute-api URL (stage v1)', viaExecuteApi('/pets/1'), `https://${EXECUTE_API_DOMAIN}/v1/pets`],
  ])('getPet through %s names its successor under /v1', async (_name, arrival, expected) => {
    const event = awsEvent(arrival, '/pets/{petId}', { pathParameters: { petId: '1' } });
    const result = await createGetPet(asFunction('getPet', dependencies))(event, lambdaContext());
    expect(result.statusCode).toBe(200);
    expect(result.headers?.Link).toBe(`<${expected}>; rel="successor-version"`);
  });

  it('listPets makes next cursors that carry their walk start', async () => {
    const result = await createListPets(asFunction('listPets', dependencies))(listPage(viaCustomDomain('/pets')), lambdaContext());
    const cursor = String(result.headers?.['X-Next-Cursor']);
    expect(decodeCursor(cursor, undefined, dependencies.clock()).walkStartedAt).toBe(dependencies.clock());
  });

  it('ignores Host and X-Forwarded-* entirely', async () => {
    const result = await createListPets(asFunction('listPets', dependencies))(listPage(viaCustomDomain('/pets')), lambdaContext());
    expect(String(result.headers?.Link)).not.toMatch(/evil\.example|javascript:/);
  });
});

describe('stageBaseUrl', () => {
  it('has no prefix behind a custom domain mapped with an empty base path', () => {
    expect(stageBaseUrl(awsEvent({ domainName: 'api.example.com', path: '/pets', requestPath: '/pets' }, '/pets'))).toBe(
      'https://api.example.com',
    );
  });

  it('keeps a trailing slash from changing the prefix', () => {
    expect(stageBaseUrl(awsEvent({ ...viaCustomDomain('/pets'), requestPath: '/v1/pets/' }, '/pets'))).toBe('https://api.example.com/v1');
  });

  it('uses plain HTTP only for the local gateway on localhost', () => {
    expect(stageBaseUrl(awsEvent({ domainName: 'localhost:3000', path: '/pets', requestPath: '/v1/pets' }, '/pets'))).toBe(
      'http://localhost:3000/v1',
    );
  });

  it('refuses a request context without a domain name rather than guessing one', () => {
    expect(() => stageBaseUrl(awsEvent({ domainName: 'evil.example/x', path: '/pets', requestPath: '/v1/pets' }, '/pets'))).toThrow(
      /domainName/,
    );
  });
});
