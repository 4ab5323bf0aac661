import { randomBytes, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { functionTimeoutSeconds, stageName } from '../../definitions/routes';

/**
 * The events API Gateway hands this API's functions, for the tests and the bench
 * that call a handler directly: REST proxy events (payload 1.0) as an
 * edge-optimized REST API sends them to a Lambda integration behind a REQUEST
 * authorizer — CloudFront and forwarding headers, multi-value copies, the full
 * requestContext, the authorizer's context with string values
 * (functions/http/caller.ts) — and the REQUEST authorizer's own event. Formats:
 * "Lambda proxy integrations in API Gateway", input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html;
 * "Input to an API Gateway Lambda authorizer", REQUEST input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-input.html.
 */
export const API_ID = 'a1b2c3d4e5';
const REGION = 'us-east-1';
const ACCOUNT_ID = '123456789012';
export const EXECUTE_API_DOMAIN = `${API_ID}.execute-api.${REGION}.amazonaws.com`;

export interface RestRequest {
  method: string;
  /** The route's resource, e.g. `/pets/{petId}`. */
  resource: string;
  /** The path below the stage, e.g. `/pets/7` (behind a custom domain, API Gateway puts the base path in front). */
  path: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  body?: string;
  /** What the client sent besides the headers every request through CloudFront carries; a name given here replaces theirs. */
  headers?: Record<string, string>;
  /**
   * Headers the client sent more than once: all their values in
   * multiValueHeaders and one in headers (here the last, as the local gateway
   * keeps), as API Gateway passes a repeated header ("Support for multi-value headers and query string parameters",
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#apigateway-multivalue-headers-and-parameters).
   */
  repeatedHeaders?: Record<string, string[]>;
  /** The REQUEST authorizer's context as API Gateway passes it on (string values); absent, none ran (null). */
  authorizer?: Record<string, string>;
  /** The domain the client called: the execute-api one unless told (a custom domain, the local gateway's host). */
  domainName?: string;
  /** requestContext.path: the stage or base path and the path; `/v1` + path unless told. */
  requestPath?: string;
}

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

/** A REST proxy event (payload 1.0) for one request. */
export function restProxyEvent(request: RestRequest): APIGatewayProxyEvent {
  const now = Date.now();
  const domainName = request.domainName ?? EXECUTE_API_DOMAIN;
  const repeated = Object.entries(request.repeatedHeaders ?? {});
  const given = { ...request.headers, ...Object.fromEntries(repeated.map(([name, values]) => [name, values.at(-1) as string])) };
  const headers = requestHeaders({ ...request, headers: given }, domainName, now);
  const multiValueHeaders = {
    ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    ...Object.fromEntries(repeated),
  };
  const query = request.query && Object.keys(request.query).length > 0 ? request.query : null;
  return {
    resource: request.resource,
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders,
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
      path: request.requestPath ?? `/${stageName}${request.path}`,
      accountId: ACCOUNT_ID,
      protocol: 'HTTP/1.1',
      stage: stageName,
      domainPrefix: domainName.split('.')[0] as string,
      requestTimeEpoch: now,
      requestId: randomUUID(),
      identity: viewerIdentity,
      domainName,
      apiId: API_ID,
      authorizer: request.authorizer ?? null,
    },
    body: request.body ?? null,
    isBase64Encoded: false,
  };
}

/**
 * The REQUEST authorizer's event for a request: its headers, parameters and
 * context, with `type` and the `methodArn` of the method called. No authorizer
 * context and no body: the authorizer runs before them.
 */
export function requestAuthorizerEvent(request: Omit<RestRequest, 'authorizer' | 'body'>): APIGatewayRequestAuthorizerEvent {
  const { body: _body, isBase64Encoded: _encoded, ...event } = restProxyEvent(request);
  return {
    ...event,
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:${REGION}:${ACCOUNT_ID}:${API_ID}/${stageName}/${request.method}${request.path}`,
    requestContext: { ...event.requestContext, authorizer: undefined },
  };
}

/** The Lambda context of one invocation, `remainingMs` before the function's timeout from now. */
export function lambdaContext(functionName = 'test', remainingMs = functionTimeoutSeconds * 1000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT_ID}:function:${functionName}`,
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

/** CloudFront's and API Gateway's headers, the body's, then the client's own (replacing any of the same name, in any case). */
function requestHeaders(request: RestRequest, domainName: string, now: number): Record<string, string> {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'Accept-Encoding': 'gzip, deflate, br',
    'CloudFront-Forwarded-Proto': 'https',
    'CloudFront-Is-Desktop-Viewer': 'true',
    'CloudFront-Is-Mobile-Viewer': 'false',
    'CloudFront-Is-SmartTV-Viewer': 'false',
    'CloudFront-Is-Tablet-Viewer': 'false',
    'CloudFront-Viewer-ASN': '64496',
    'CloudFront-Viewer-Country': 'DE',
    Host: domainName,
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
  const given = request.headers ?? {};
  const replaced = new Set(Object.keys(given).map((name) => name.toLowerCase()));
  for (const name of Object.keys(headers)) if (replaced.has(name.toLowerCase())) delete headers[name];
  return { ...headers, ...given };
}
