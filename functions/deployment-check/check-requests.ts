import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { deploymentCheckKey } from '../../definitions/deployment-check';
import { authorizer, type OperationId, type RouteDefinition, routes, stageName } from '../../definitions/routes';

/** Where the check's requests say they were sent: a host of its own, so a Location or Link it gets back is recognisably its. */
const CHECK_DOMAIN = 'deployment-check.petstore.invalid';

/** What the check sends to one operation, and the statuses that mean the new version works. */
export interface CheckRequest {
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  expected: readonly number[];
}

/**
 * One request per operation of the route table (a new route without one here
 * does not compile): a page of one pet, a create (status sold, replayed by its
 * Idempotency-Key when the hook runs again for the same version), and a read
 * of the pet created (404 when none could be, 410 after getPet's sunset).
 */
export function checkRequests(createPetVersion: string, createdPetId: number | undefined): Record<OperationId, CheckRequest> {
  return {
    listPets: { query: { limit: '1' }, expected: [200] },
    createPet: {
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `"deployment-check-${createPetVersion}"` },
      body: { name: deploymentCheckKey.petName, categoryId: 1, status: 'sold' },
      expected: [201],
    },
    getPet: { pathParameters: { petId: String(createdPetId ?? 1) }, expected: createdPetId ? [200, 410] : [200, 404, 410] },
  };
}

/** The operations in the order the check calls them: the create before the read of what it created. */
export const checkOrder: readonly OperationId[] = ['listPets', 'createPet', 'getPet'];

function pathOf(route: RouteDefinition, pathParameters: Record<string, string> = {}): string {
  return route.path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(pathParameters[name] ?? ''));
}

/** A REST API proxy event (payload 1.0) as API Gateway would send it for `request`, with the authorizer's context. */
export function proxyEvent(route: RouteDefinition, request: CheckRequest, authorizerContext: Record<string, string>): APIGatewayProxyEvent {
  const path = pathOf(route, request.pathParameters);
  const headers: Record<string, string> = { Host: CHECK_DOMAIN, ...request.headers };
  const query = request.query ?? null;
  const now = Date.now();
  return {
    resource: route.path,
    path,
    httpMethod: route.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: query,
    multiValueQueryStringParameters: query ? Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]])) : null,
    pathParameters: request.pathParameters ?? null,
    stageVariables: null,
    requestContext: {
      resourcePath: route.path,
      httpMethod: route.method,
      path: `/${stageName}${path}`,
      stage: stageName,
      domainName: CHECK_DOMAIN,
      requestId: `deployment-check-${now}`,
      requestTimeEpoch: now,
      authorizer: authorizerContext,
    } as APIGatewayProxyEvent['requestContext'],
    body: request.body === undefined ? null : JSON.stringify(request.body),
    isBase64Encoded: false,
  };
}

/** The REQUEST authorizer's event for the check's key, as API Gateway sends it for GET /pets (never cached: a direct call). */
export function authorizerEvent(secret: string, arnPrefix: string): APIGatewayRequestAuthorizerEvent {
  const route = routes.find((candidate) => candidate.operationId === 'listPets') as RouteDefinition;
  const headers = { [authorizer.identityHeader]: `Bearer ${secret}`, Host: CHECK_DOMAIN };
  return {
    type: 'REQUEST',
    methodArn: `${arnPrefix}/${stageName}/${route.method}${route.path}`,
    resource: route.path,
    path: route.path,
    httpMethod: route.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: { path: `/${stageName}${route.path}`, stage: stageName } as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}
