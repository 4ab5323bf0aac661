import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { type GatewayResponseType, gatewayResponse } from '../definitions/gateway-responses';
import { authorizer as authorizerDefinition, functionTimeoutSeconds, type RouteDefinition, stageName } from '../definitions/routes';
import type { Clock } from '../functions/runtime/clock';

/**
 * A local stand-in for API Gateway, doing for this API what API Gateway does:
 * route under /v1 by the route table, call the REQUEST authorizer (and cache
 * its answers per Authorization value for the same TTL), build REST proxy
 * events (payload v1), and answer with the shared gateway responses.
 */
export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

export interface LocalGatewayOptions {
  routes: readonly { route: RouteDefinition; handler: ProxyHandler }[];
  authorizer: AuthorizerHandler;
  clock: Clock;
  authorizerCacheTtlSeconds?: number;
  /** Sees every answer a function gave, e.g. for the load test's bookkeeping. */
  onFunctionResponse?: (event: APIGatewayProxyEvent, result: APIGatewayProxyResult) => void;
}

/** API Gateway's own limits that matter here. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const INTEGRATION_TIMEOUT_MS = 29_000;
const ACCOUNT_ID = '000000000000';
const API_ID = 'local';
const REGION = 'local';

interface CompiledRoute {
  route: RouteDefinition;
  handler: ProxyHandler;
  pattern: RegExp;
  parameterNames: string[];
}

export function createLocalGateway(options: LocalGatewayOptions): Server {
  const compiled = options.routes.map(({ route, handler }) => compileRoute(route, handler));
  const cacheTtlMs = (options.authorizerCacheTtlSeconds ?? authorizerDefinition.resultsCacheTtlSeconds) * 1000;
  const authorizerCache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();

  const authorize = async (event: APIGatewayRequestAuthorizerEvent, identity: string) => {
    const now = options.clock();
    const cached = authorizerCache.get(identity);
    if (cached && cached.expiresAt > now) return cached.result;
    const result = await options.authorizer(event);
    if (cacheTtlMs > 0) authorizerCache.set(identity, { result, expiresAt: now + cacheTtlMs });
    return result;
  };

  return createServer((request, response) => {
    handle(request, response).catch(() => send(response, gatewayResponse('DEFAULT_5XX')));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestTimeEpoch = options.clock();
    const url = new URL(request.url ?? '/', 'http://localhost');
    const body = await readBody(request);
    if (body === 'too_large') return sendGateway(response, 'REQUEST_TOO_LARGE');

    const stagePrefix = `/${stageName}`;
    const method = request.method ?? 'GET';
    const resourcePath = url.pathname.startsWith(`${stagePrefix}/`) ? url.pathname.slice(stagePrefix.length) : undefined;
    const match = resourcePath === undefined ? undefined : findRoute(compiled, method, resourcePath);
    // Unknown path or method: API Gateway answers before any authorizer runs.
    if (!match || resourcePath === undefined) return sendGateway(response, 'MISSING_AUTHENTICATION_TOKEN');

    const { headers, multiValueHeaders } = collectHeaders(request);
    if (findHeader(headers, 'X-Forwarded-Proto') === undefined) {
      headers['X-Forwarded-Proto'] = 'http';
      multiValueHeaders['X-Forwarded-Proto'] = ['http'];
    }
    const { queryStringParameters, multiValueQueryStringParameters } = collectQuery(url);
    const requestId = randomUUID();
    const identity = findHeader(headers, authorizerDefinition.identityHeader);
    // An empty identity source is a missing one: 401 without calling the authorizer.
    if (!identity) return sendGateway(response, 'UNAUTHORIZED');

    const methodArn = `arn:aws:execute-api:${REGION}:${ACCOUNT_ID}:${API_ID}/${stageName}/${method}${resourcePath}`;
    const requestContext = {
      accountId: ACCOUNT_ID,
      apiId: API_ID,
      stage: stageName,
      requestId,
      extendedRequestId: requestId,
      httpMethod: method,
      path: url.pathname,
      resourcePath: match.compiled.route.path,
      resourceId: match.compiled.route.operationId,
      protocol: `HTTP/${request.httpVersion}`,
      domainName: findHeader(headers, 'Host') ?? 'localhost',
      domainPrefix: 'localhost',
      requestTime: new Date(requestTimeEpoch).toUTCString(),
      requestTimeEpoch,
      identity: identityOf(request),
      authorizer: undefined as unknown,
    } as APIGatewayProxyEvent['requestContext'];

    let authorization: APIGatewayAuthorizerResult;
    try {
      authorization = await authorize(
        {
          type: 'REQUEST',
          methodArn,
          resource: match.compiled.route.path,
          path: resourcePath,
          httpMethod: method,
          headers,
          multiValueHeaders,
          pathParameters: match.pathParameters,
          queryStringParameters,
          multiValueQueryStringParameters,
          stageVariables: null,
          requestContext,
        } as unknown as APIGatewayRequestAuthorizerEvent,
        identity,
      );
    } catch (error) {
      const unauthorized = error instanceof Error && error.message === 'Unauthorized';
      return sendGateway(response, unauthorized ? 'UNAUTHORIZED' : 'AUTHORIZER_FAILURE');
    }
    if (!allows(authorization, methodArn)) return sendGateway(response, 'ACCESS_DENIED');

    const event: APIGatewayProxyEvent = {
      resource: match.compiled.route.path,
      path: resourcePath,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters,
      multiValueQueryStringParameters,
      pathParameters: match.pathParameters,
      stageVariables: null,
      requestContext: {
        ...requestContext,
        // REST APIs hand the authorizer's context to the integration with string values.
        authorizer: { ...stringValues(authorization.context ?? {}), principalId: authorization.principalId },
      },
      body: body.length > 0 ? body.toString('utf8') : null,
      isBase64Encoded: false,
    };

    let result: APIGatewayProxyResult;
    try {
      result = await withTimeout(match.compiled.handler(event, lambdaContext(requestId)), INTEGRATION_TIMEOUT_MS);
    } catch (error) {
      return sendGateway(response, error === TIMED_OUT ? 'INTEGRATION_TIMEOUT' : 'DEFAULT_5XX');
    }
    if (!result || typeof result.statusCode !== 'number') return sendGateway(response, 'DEFAULT_5XX');
    options.onFunctionResponse?.(event, result);
    send(response, result);
  }
}

function compileRoute(route: RouteDefinition, handler: ProxyHandler): CompiledRoute {
  const parameterNames: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const parameter = /^\{(\w+)\}$/.exec(segment);
      if (!parameter?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      parameterNames.push(parameter[1]);
      return '([^/]+)';
    })
    .join('/');
  return { route, handler, pattern: new RegExp(`^${source}$`), parameterNames };
}

function findRoute(routes: CompiledRoute[], method: string, path: string) {
  for (const compiled of routes) {
    if (compiled.route.method !== method) continue;
    const found = compiled.pattern.exec(path);
    if (!found) continue;
    const parameters: Record<string, string> = {};
    compiled.parameterNames.forEach((name, index) => {
      parameters[name] = safeDecode(found[index + 1] ?? '');
    });
    return { compiled, pathParameters: compiled.parameterNames.length > 0 ? parameters : null };
  }
  return undefined;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Names come from the client: collect them in Maps and build the objects with
 * Object.fromEntries, so that names like `__proto__` or `toString` are plain own
 * properties, as they are in the JSON event API Gateway sends.
 */
function collectHeaders(request: IncomingMessage) {
  const multi = new Map<string, string[]>();
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string;
    const value = raw[index + 1] as string;
    const existing = [...multi.keys()].find((key) => key.toLowerCase() === name.toLowerCase()) ?? name;
    multi.set(existing, [...(multi.get(existing) ?? []), value]);
  }
  return {
    headers: Object.fromEntries([...multi].map(([name, values]) => [name, values.at(-1) as string])),
    multiValueHeaders: Object.fromEntries(multi),
  };
}

function collectQuery(url: URL) {
  if ([...url.searchParams.keys()].length === 0) {
    return { queryStringParameters: null, multiValueQueryStringParameters: null };
  }
  const multi = new Map<string, string[]>();
  for (const [name, value] of url.searchParams) multi.set(name, [...(multi.get(name) ?? []), value]);
  return {
    queryStringParameters: Object.fromEntries([...multi].map(([name, values]) => [name, values.at(-1) as string])),
    multiValueQueryStringParameters: Object.fromEntries(multi),
  };
}

function findHeader(headers: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}

function identityOf(request: IncomingMessage) {
  return {
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    userAgent: request.headers['user-agent'] ?? null,
  } as APIGatewayProxyEvent['requestContext']['identity'];
}

function stringValues(context: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(context).map(([key, value]) => [key, String(value)]));
}

/** Whether an Allow statement covers the method ARN (with API Gateway's `*` wildcards). */
function allows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  const statements = result.policyDocument?.Statement ?? [];
  const matches = (resource: string) =>
    new RegExp(`^${resource.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(methodArn);
  const covers = (statement: (typeof statements)[number]) => {
    const resources = 'Resource' in statement ? [statement.Resource].flat() : [];
    return resources.some((resource) => typeof resource === 'string' && matches(resource));
  };
  if (statements.some((statement) => statement.Effect === 'Deny' && covers(statement))) return false;
  return statements.some((statement) => statement.Effect === 'Allow' && covers(statement));
}

/** A Lambda context with the functions' timeout, on real time (never the injected clock). */
function lambdaContext(requestId: string): Context {
  const deadline = Date.now() + functionTimeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'local',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT_ID}:function:local`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: 'local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const TIMED_OUT = Symbol('timed out');

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(TIMED_OUT), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function readBody(request: IncomingMessage): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) return 'too_large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function sendGateway(response: ServerResponse, type: GatewayResponseType): void {
  send(response, gatewayResponse(type));
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  if (response.headersSent) return;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
  const body = result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : Buffer.from(result.body ?? '');
  response.writeHead(result.statusCode, { ...headers, 'Content-Length': String(body.length) });
  response.end(body);
}
