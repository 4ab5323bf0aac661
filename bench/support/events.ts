import { randomBytes, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';

/**
 * API Gateway REST proxy events (payload 1.0) as an edge-optimized REST API
 * sends them to a Lambda integration behind a REQUEST authorizer: CloudFront
 * and forwarding headers, multi-value copies, the full requestContext and the
 * authorizer's context with string values (functions/http/caller.ts). The
 * caller is an Enterprise key with limits so high that the limiter counts every
 * request and never refuses one.
 */
export const ENTERPRISE_LIMIT = 1_000_000_000;
const API_ID = 'a1b2c3d4e5';
const DOMAIN = `${API_ID}.execute-api.us-east-1.amazonaws.com`;
const STAGE = 'v1';

export interface ProxyRequest {
  method: 'GET' | 'POST';
  /** The route's resource, e.g. `/pets/{petId}`. */
  resource: string;
  /** The path below the stage, e.g. `/pets/7`. */
  path: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  body?: string;
  /** The key id the authorizer found: each contender counts under its own. */
  keyId: string;
}

const bearer = `Bearer psk_${randomBytes(32).toString('base64url')}`;

/** Who API Gateway says sent the request (no Cognito, no IAM: the caller is known from the authorizer). */
const viewerIdentity = {
  cognitoIdentityPoolId: null,
  accountId: null,
  cognitoIdentityId: null,
  caller: null,
  sourceIp: '203.0.113.10',
  principalOrgId: null,
  accessKey: null,
  cognitoAuthenticationType: null,
  cognitoAuthenticationProvider: null,
  userArn: null,
  userAgent: 'petstore-client/1.4 (node)',
  user: null,
  apiKey: null,
  apiKeyId: null,
  clientCert: null,
};

export function restProxyEvent(request: ProxyRequest): APIGatewayProxyEvent {
  const requestId = randomUUID();
  const now = Date.now();
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'Accept-Encoding': 'gzip, deflate, br',
    Authorization: bearer,
    'CloudFront-Forwarded-Proto': 'https',
    'CloudFront-Is-Desktop-Viewer': 'true',
    'CloudFront-Is-Mobile-Viewer': 'false',
    'CloudFront-Is-SmartTV-Viewer': 'false',
    'CloudFront-Is-Tablet-Viewer': 'false',
    'CloudFront-Viewer-ASN': '64496',
    'CloudFront-Viewer-Country': 'DE',
    Host: DOMAIN,
    'User-Agent': 'petstore-client/1.4 (node)',
    Via: '2.0 4f8b2c1e0d9a7b6c5d4e3f2a1b0c9d8e.cloudfront.net (CloudFront)',
    'X-Amz-Cf-Id': randomBytes(30).toString('base64url'),
    'X-Amzn-Trace-Id': `Root=1-${Math.floor(now / 1000).toString(16)}-${randomBytes(12).toString('hex')}`,
    'X-Forwarded-For': '203.0.113.10, 130.176.212.9',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
  };
  if (request.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(request.body));
  }
  const query = request.query && Object.keys(request.query).length > 0 ? request.query : null;
  return {
    resource: request.resource,
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: query,
    multiValueQueryStringParameters: query ? Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]])) : null,
    pathParameters: request.pathParameters ?? null,
    stageVariables: null,
    requestContext: {
      resourceId: 'x1y2z3',
      resourcePath: request.resource,
      httpMethod: request.method,
      extendedRequestId: `${randomBytes(6).toString('base64url')}=`,
      requestTime: new Date(now).toUTCString(),
      path: `/${STAGE}${request.path}`,
      accountId: '123456789012',
      protocol: 'HTTP/1.1',
      stage: STAGE,
      domainPrefix: API_ID,
      requestTimeEpoch: now,
      requestId,
      identity: viewerIdentity,
      domainName: DOMAIN,
      apiId: API_ID,
      authorizer: {
        keyId: request.keyId,
        plan: 'enterprise',
        perMinute: String(ENTERPRISE_LIMIT),
        perDay: String(ENTERPRISE_LIMIT),
        principalId: request.keyId,
      },
    },
    body: request.body ?? null,
    isBase64Encoded: false,
  };
}

/** The Lambda context of one invocation, with the function's 10 s timeout. */
export function lambdaContext(functionName: string): Context {
  const deadline = Date.now() + 10_000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/01/01/[$LATEST]0123456789abcdef0123456789abcdef',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The requests of the benchmark, per operation. */
export const requests = {
  getPet: (keyId: string, petId: number): ProxyRequest => ({
    method: 'GET',
    resource: '/pets/{petId}',
    path: `/pets/${petId}`,
    pathParameters: { petId: String(petId) },
    keyId,
  }),
  createPet: (keyId: string, sequence: number): ProxyRequest => ({
    method: 'POST',
    resource: '/pets',
    path: '/pets',
    body: JSON.stringify({ name: `Bench pet ${sequence}`, categoryId: 1 + (sequence % 7), status: 'available' }),
    keyId,
  }),
  listPets: (keyId: string): ProxyRequest => ({ method: 'GET', resource: '/pets', path: '/pets', query: { limit: '20' }, keyId }),
};

/**
 * The event of a Lambda REQUEST authorizer for GET /pets/{petId}: the request's
 * headers, parameters and context, with `type` and `methodArn` (format:
 * "Input to an API Gateway Lambda authorizer", REQUEST input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-input.html).
 */
export function authorizerEvent(secret: string, petId: number): APIGatewayRequestAuthorizerEvent {
  const { body: _body, isBase64Encoded: _encoded, ...request } = restProxyEvent(requests.getPet('unknown', petId));
  const headers = { ...request.headers, Authorization: `Bearer ${secret}` };
  const { authorizer: _authorizer, ...requestContext } = request.requestContext;
  return {
    ...request,
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:us-east-1:123456789012:${API_ID}/${STAGE}/GET/pets/${petId}`,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    requestContext: { ...requestContext, authorizer: undefined },
  };
}
