import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { errorBody } from '../definitions/error-codes';
import { type GatewayResponseType, gatewayResponse } from '../definitions/gateway-responses';
import {
  API_GATEWAY_MAX_PAYLOAD_BYTES,
  LAMBDA_MAX_INVOKE_PAYLOAD_BYTES,
  maxRequestBodyBytes,
  oversizeBodyAnswer,
} from '../definitions/request-size-limits';
import { authorizer as authorizerDefinition, functionTimeoutSeconds, type RouteDefinition, stageName } from '../definitions/routes';
import type { UsagePlanSettings } from '../definitions/usage-plan-limits';
import { soleAuthorization } from '../functions/http/bearer-token';
import { header } from '../functions/http/request';
import type { Clock } from '../functions/runtime/clock';
import type { Refusal } from './refusal-log';

/**
 * A local stand-in for API Gateway, doing for this API what API Gateway does:
 * route under /v1 by the route table, call the REQUEST authorizer (and cache
 * its answers per Authorization value for the same TTL), apply usage plans per
 * API key when given some, build REST proxy events (payload v1), and answer
 * with the shared gateway responses.
 */
export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

export interface LocalGatewayOptions {
  routes: readonly { route: RouteDefinition; handler: ProxyHandler }[];
  authorizer: AuthorizerHandler;
  clock: Clock;
  authorizerCacheTtlSeconds?: number;
  /** API Gateway's 29 s unless a test needs a shorter wait. */
  integrationTimeoutMs?: number;
  /** API Gateway's 10 s for the authorizer unless a test needs a shorter wait. */
  authorizerTimeoutMs?: number;
  /** The functions' Lambda timeout (functionTimeoutSeconds) unless a test needs a shorter wait. */
  functionTimeoutMs?: number;
  /**
   * The usage plan of an API key (the authorizer's usageIdentifierKey, with
   * the context the authorizer answered beside it), which the gateway applies
   * per key as API Gateway does (usagePlanMeter). Unset, none; npm start
   * passes the plans as the stack and the key tool make them (local/usage-plans.ts).
   */
  usagePlanOf?: (apiKey: string, context: Record<string, unknown>) => UsagePlanSettings | undefined;
  /** Sees every answer a function gave, e.g. for the load test's bookkeeping. */
  onFunctionResponse?: (event: APIGatewayProxyEvent, result: APIGatewayProxyResult) => void;
  /**
   * The stage's AWS WAF body-size rule (lib/constructs/api-firewall.ts): on,
   * as every stage has it, unless a test shows what API Gateway and Lambda
   * alone would do with a large body.
   */
  firewall?: boolean;
  /** npm start's operator log: sees one line per refused request, status 400 and up (local/refusal-log.ts). */
  onRefusal?: (refusal: Refusal) => void;
  /** Why a key was refused (the authorizer's "Unauthorized", or a function's 401 after a cached Allow), for that log (local/refusal-log.ts). */
  unauthorizedReason?: (authorization: string) => Promise<Pick<Refusal, 'reason' | 'principalId'>>;
}

/**
 * API Gateway's own limits that matter here (docs/api-gateway-behaviour.md
 * names the AWS page of each; the payload limits, definitions/request-size-limits.ts).
 */
/** "Total combined size of request line and header values": 10,240 bytes. */
const MAX_HEADER_BYTES = 10_240;
/** The integration timeout of a REST API: 29 s by default. */
const INTEGRATION_TIMEOUT_MS = 29_000;
/**
 * How long API Gateway waits for a Lambda authorizer: "Timeout for Lambda
 * authorizer response: 10000 ms" ("Quotas for configuring and running an HTTP
 * API in API Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html;
 * the REST API quota table names no other figure). Our authorizer's own
 * Lambda timeout (functionTimeoutSeconds) is the same 10 s, and it answers
 * before either, within its time budget.
 */
const AUTHORIZER_TIMEOUT_MS = 10_000;
const ACCOUNT_ID = '000000000000';
const API_ID = 'local';
const REGION = 'local';

interface CompiledRoute {
  route: RouteDefinition;
  handler: ProxyHandler;
  pattern: RegExp;
  parameterNames: string[];
}

/** What the gateway knows about a request once it matched a route. */
interface RoutedRequest {
  request: IncomingMessage;
  method: string;
  /** The path below the stage, e.g. /pets/7. */
  resourcePath: string;
  url: URL;
  compiled: CompiledRoute;
  pathParameters: Record<string, string> | null;
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  query: ReturnType<typeof collectQuery>;
  requestContext: APIGatewayProxyEvent['requestContext'];
}

export function createLocalGateway(options: LocalGatewayOptions): Server {
  const handle = gatewayHandler(options);
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (request, response) => {
    handle(request, response).catch(() => send(response, gatewayResponse('DEFAULT_5XX')));
  });
  // Requests Node's parser refuses before any handler runs (headers too large,
  // a method such as FOO): an Error object instead of Node's empty 431 or 400.
  server.on('clientError', answerUnparsableRequest);
  return server;
}

/** What the gateway keeps across requests: the authorizer's cache, the usage plans' buckets, the operator's log. */
type GatewaySteps = ReturnType<typeof operatorLog> & {
  authorize: ReturnType<typeof cachingAuthorizer>;
  meter: ReturnType<typeof usagePlanMeter>;
};

/** API Gateway's steps for one request, in its order, up to the authorizer: body size (WAF), route, identity source. */
function gatewayHandler(options: LocalGatewayOptions) {
  const compiled = options.routes.map(({ route, handler }) => compileRoute(route, handler));
  const steps: GatewaySteps = { authorize: cachingAuthorizer(options), meter: usagePlanMeter(options), ...operatorLog(options) };
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const requestTimeEpoch = options.clock();
    // AWS WAF sees the request before API Gateway does: a body over its limit never reaches a route.
    const body = await readBody(request, options.firewall === false ? API_GATEWAY_MAX_PAYLOAD_BYTES : maxRequestBodyBytes);
    if (body === 'too_large') return refuseTooLarge(request, response, options.firewall !== false, steps.tell);
    const routed = routeOf(compiled, request, requestTimeEpoch);
    // Unknown path or method: API Gateway answers before any authorizer runs.
    if (!routed) return steps.refuse(response, request, undefined, 'MISSING_AUTHENTICATION_TOKEN', { reason: 'no_such_route' });
    // An empty identity source is a missing one: 401 without calling the authorizer. So are two
    // Authorization fields, whatever their order (functions/http/bearer-token.ts, soleAuthorization).
    const identity = soleAuthorization(routed, authorizerDefinition.identityHeader);
    if (!identity) return steps.refuse(response, request, routed, 'UNAUTHORIZED', { reason: missingIdentityReason(routed) });
    return authorizedCall(options, steps, { response, routed, identity, body });
  };
}

/** The rest of API Gateway's steps: the authorizer (cached), the usage plan, the payload limit, the function. */
async function authorizedCall(
  options: LocalGatewayOptions,
  { authorize, meter, refuse, tell }: GatewaySteps,
  { response, routed, identity, body }: { response: ServerResponse; routed: RoutedRequest; identity: string; body: Buffer },
): Promise<void> {
  const { request } = routed;
  const authorization = await authorize(authorizerEvent(routed), identity);
  if (typeof authorization === 'string')
    return refuse(response, request, routed, authorization, await refusalByAuthorizer(options, authorization, identity));
  const { principalId } = authorization;
  const metered = meter(authorization.usageIdentifierKey ?? undefined, authorization.context ?? {});
  if (metered) return refuse(response, request, routed, metered, { principalId });
  const event = proxyEvent(routed, authorization, body);
  // Lambda refuses the invocation itself; API Gateway answers INTEGRATION_FAILURE and no function runs.
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_MAX_INVOKE_PAYLOAD_BYTES)
    return refuse(response, request, routed, 'INTEGRATION_FAILURE', { principalId, reason: 'payload_over_lambda_limit' });
  const timeouts = [
    options.integrationTimeoutMs ?? INTEGRATION_TIMEOUT_MS,
    options.functionTimeoutMs ?? functionTimeoutSeconds * 1000,
  ] as const;
  const result = await invoke(routed.compiled.handler, event, ...timeouts);
  if (typeof result === 'string') return refuse(response, request, routed, result, { principalId });
  options.onFunctionResponse?.(event, result);
  const details = await refusalByFunction(options, result, identity);
  send(response, result);
  tell(request, routed, result, { principalId, ...details });
}

/** The route a request names under the stage, with what its proxy event carries; undefined for an unknown path or method. */
function routeOf(compiled: CompiledRoute[], request: IncomingMessage, requestTimeEpoch: number): RoutedRequest | undefined {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const stagePrefix = `/${stageName}`;
  const method = request.method ?? 'GET';
  if (!url.pathname.startsWith(`${stagePrefix}/`)) return undefined;
  const resourcePath = url.pathname.slice(stagePrefix.length);
  const match = findRoute(compiled, method, resourcePath);
  if (!match) return undefined;
  const { headers, multiValueHeaders } = collectHeaders(request);
  const requestContext = buildRequestContext({ request, method, url, route: match.compiled.route, requestTimeEpoch });
  return { request, method, resourcePath, url, ...match, headers, multiValueHeaders, query: collectQuery(url), requestContext };
}

/**
 * The REQUEST authorizer behind API Gateway's result cache, keyed by the
 * identity source, the exact Authorization value, case and spaces included,
 * for the authorizer's TTL: the identity source's values "will be used to
 * derive the authorization caching key" (CreateAuthorizer, identitySource,
 * https://docs.aws.amazon.com/apigateway/latest/api/API_CreateAuthorizer.html),
 * and AWS documents no normalisation of them. So `bearer K` and `Bearer K` are
 * two entries: each form a client uses costs one authorizer call per cache
 * period (decision 7). WAF's rate rules, which do normalise the key, are not imitated. Answers
 * the authorizer's policy, or the gateway response API Gateway would send
 * instead: "Unauthorized" → UNAUTHORIZED (401), any other failure →
 * AUTHORIZER_FAILURE (503), a policy that does not allow the method → ACCESS_DENIED.
 */
function cachingAuthorizer(options: LocalGatewayOptions) {
  const cacheTtlMs = (options.authorizerCacheTtlSeconds ?? authorizerDefinition.resultsCacheTtlSeconds) * 1000;
  const cache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();
  const cachedOrFresh = async (event: APIGatewayRequestAuthorizerEvent, identity: string) => {
    const now = options.clock();
    const cached = cache.get(identity);
    if (cached && cached.expiresAt > now) return cached.result;
    const timeoutMs = Math.min(
      options.authorizerTimeoutMs ?? AUTHORIZER_TIMEOUT_MS,
      options.functionTimeoutMs ?? functionTimeoutSeconds * 1000,
    );
    const result = await withTimeout(options.authorizer(event, lambdaContext(event.requestContext.requestId, timeoutMs)), timeoutMs);
    if (cacheTtlMs > 0) cache.set(identity, { result, expiresAt: now + cacheTtlMs });
    return result;
  };
  return async (event: APIGatewayRequestAuthorizerEvent, identity: string): Promise<APIGatewayAuthorizerResult | GatewayResponseType> => {
    let result: APIGatewayAuthorizerResult;
    try {
      result = await cachedOrFresh(event, identity);
    } catch (error) {
      // An authorizer that does not answer in time is a failure to call it, as when it cannot be reached.
      if (error === TIMED_OUT) return 'AUTHORIZER_CONFIGURATION_ERROR';
      return error instanceof Error && error.message === 'Unauthorized' ? 'UNAUTHORIZED' : 'AUTHORIZER_FAILURE';
    }
    return allows(result, event.methodArn) ? result : 'ACCESS_DENIED';
  };
}

/**
 * API Gateway's usage plans, per API key: a token bucket (the throttle's rate
 * and burst) and a daily quota, each only if the plan has it. "Per-client
 * throttling limits are applied to clients that use API keys associated with
 * your usage plan as client identifier", first of API Gateway's throttles ("Throttle
 * requests to your REST APIs for better throughput in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html):
 * with the key from the authorizer (apiKeySource AUTHORIZER), after it.
 * Whether a throttled request spends quota is not documented: here it does
 * (the stricter side). The quota's day is the UTC day of the injected clock.
 * The plan is read at every request, as the key tool last set it. What a
 * bucket holds when its burst changes is not documented either: here it keeps
 * what was spent of it (a raise adds the difference at once), so a raise
 * never refuses what the new plan allows.
 */
function usagePlanMeter(options: LocalGatewayOptions) {
  const buckets = new Map<string, { tokens: number; burst: number; at: number; day: string; used: number }>();
  return (apiKey: string | undefined, context: Record<string, unknown>): GatewayResponseType | undefined => {
    if (apiKey === undefined) return undefined;
    const plan = options.usagePlanOf?.(apiKey, context);
    if (!plan) return undefined;
    const now = options.clock();
    const day = new Date(now).toISOString().slice(0, 10);
    const state = buckets.get(apiKey) ?? {
      tokens: plan.throttle?.burstLimit ?? 0,
      burst: plan.throttle?.burstLimit ?? 0,
      at: now,
      day,
      used: 0,
    };
    buckets.set(apiKey, state);
    if (state.day !== day) Object.assign(state, { day, used: 0 });
    state.used++;
    if (plan.quota && state.used > plan.quota.limit) return 'QUOTA_EXCEEDED';
    if (!plan.throttle) return undefined;
    const { rateLimit, burstLimit } = plan.throttle;
    state.tokens = Math.max(0, state.tokens + burstLimit - state.burst);
    state.burst = burstLimit;
    // A test clock may be set back: time that runs backwards refills nothing.
    state.tokens = Math.min(burstLimit, state.tokens + (Math.max(0, now - state.at) / 1000) * rateLimit);
    state.at = now;
    if (state.tokens < 1) return 'THROTTLED';
    state.tokens -= 1;
    return undefined;
  };
}

/**
 * The request context API Gateway adds. domainName is the host the client
 * reached, which here is this server's own address (the socket's local side),
 * never the client's Host header: the functions build absolute URLs from it.
 */
function buildRequestContext(input: {
  request: IncomingMessage;
  method: string;
  url: URL;
  route: RouteDefinition;
  requestTimeEpoch: number;
}) {
  const requestId = randomUUID();
  const domainName = localDomainName(input.request);
  return {
    accountId: ACCOUNT_ID,
    apiId: API_ID,
    stage: stageName,
    requestId,
    extendedRequestId: requestId,
    httpMethod: input.method,
    path: input.url.pathname,
    resourcePath: input.route.path,
    resourceId: input.route.operationId,
    protocol: `HTTP/${input.request.httpVersion}`,
    domainName,
    domainPrefix: domainName.split(/[.:]/)[0] ?? domainName,
    requestTime: new Date(input.requestTimeEpoch).toUTCString(),
    requestTimeEpoch: input.requestTimeEpoch,
    identity: identityOf(input.request),
    authorizer: undefined as unknown,
  } as APIGatewayProxyEvent['requestContext'];
}

/**
 * The host the client reached, as API Gateway's domainName is: the Host
 * header only when it names this server (localhost, 127.0.0.1 or the address
 * the client connected to, with this port), as API Gateway answers only for
 * its own domains; any other Host is ignored for `localhost:<port>` (or the
 * connected address when it is not a loopback one).
 */
function localDomainName(request: IncomingMessage): string {
  const address = (request.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const port = request.socket.localPort;
  const loopback = address === '::1' || address.startsWith('127.');
  const own = loopback ? `localhost:${port}` : address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  const served = new Set([own, `localhost:${port}`, `127.0.0.1:${port}`]);
  const host = request.headers.host?.toLowerCase();
  return host !== undefined && served.has(host) ? host : own;
}

function authorizerEvent(routed: RoutedRequest): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:${REGION}:${ACCOUNT_ID}:${API_ID}/${stageName}/${routed.method}${routed.resourcePath}`,
    resource: routed.compiled.route.path,
    path: routed.resourcePath,
    httpMethod: routed.method,
    headers: routed.headers,
    multiValueHeaders: routed.multiValueHeaders,
    pathParameters: routed.pathParameters,
    ...routed.query,
    stageVariables: null,
    requestContext: routed.requestContext,
  } as unknown as APIGatewayRequestAuthorizerEvent;
}

/** A REST API proxy event (payload 1.0), as API Gateway hands it to the function. */
function proxyEvent(routed: RoutedRequest, authorization: APIGatewayAuthorizerResult, body: Buffer): APIGatewayProxyEvent {
  return {
    resource: routed.compiled.route.path,
    path: routed.resourcePath,
    httpMethod: routed.method,
    headers: routed.headers,
    multiValueHeaders: routed.multiValueHeaders,
    ...routed.query,
    pathParameters: routed.pathParameters,
    stageVariables: null,
    requestContext: {
      ...routed.requestContext,
      // REST APIs hand the authorizer's context to the integration with string values.
      authorizer: { ...stringValues(authorization.context ?? {}), principalId: authorization.principalId },
    },
    // Not valid UTF-8: decoded with U+FFFD in place of the bad bytes (the
    // functions then refuse or store text that is at least well formed).
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
  };
}

/**
 * Runs the function as Lambda and API Gateway would: Lambda stops it at its
 * timeout (functionTimeoutSeconds), which API Gateway answers as a function
 * error ("Handling Lambda errors with an API Gateway API",
 * https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html),
 * the gateway response INTEGRATION_FAILURE (definitions/gateway-responses.ts
 * says why); API Gateway stops waiting at its integration timeout
 * (INTEGRATION_TIMEOUT), whichever comes first. A crash, a malformed answer
 * or a function that cannot be invoked (its process cannot start, or died:
 * local/lambda-runtime.ts) is INTEGRATION_FAILURE too.
 */
async function invoke(
  handler: ProxyHandler,
  event: APIGatewayProxyEvent,
  integrationTimeoutMs: number,
  functionTimeoutMs: number,
): Promise<APIGatewayProxyResult | GatewayResponseType> {
  let result: APIGatewayProxyResult;
  try {
    result = await withTimeout(
      handler(event, lambdaContext(event.requestContext.requestId, functionTimeoutMs)),
      Math.min(integrationTimeoutMs, functionTimeoutMs),
    );
  } catch (error) {
    return error === TIMED_OUT && integrationTimeoutMs <= functionTimeoutMs ? 'INTEGRATION_TIMEOUT' : 'INTEGRATION_FAILURE';
  }
  if (!result || typeof result.statusCode !== 'number') return 'INTEGRATION_FAILURE';
  return result;
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
    new RegExp(
      `^${resource
        .split('*')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    ).test(methodArn);
  const covers = (statement: (typeof statements)[number]) => {
    const resources = 'Resource' in statement ? [statement.Resource].flat() : [];
    return resources.some((resource) => typeof resource === 'string' && matches(resource));
  };
  if (statements.some((statement) => statement.Effect === 'Deny' && covers(statement))) return false;
  return statements.some((statement) => statement.Effect === 'Allow' && covers(statement));
}

/** A Lambda context with the function's timeout, on real time (never the injected clock). */
function lambdaContext(requestId: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
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

/** npm start's operator log (LocalGatewayOptions.onRefusal): a line per answer of 400 and up. */
function operatorLog(options: LocalGatewayOptions) {
  /** A line for an answer of 400 and up, its reason the Error object's code unless told. */
  const tell = (request: IncomingMessage, routed: RoutedRequest | undefined, answer: APIGatewayProxyResult, details: RefusalDetails) => {
    if (!options.onRefusal || answer.statusCode < 400) return;
    const code = errorCodeOf(answer);
    const told = Object.fromEntries(Object.entries(details).filter(([, value]) => value !== undefined));
    options.onRefusal({ ...requestFields(request, routed), status: answer.statusCode, code, reason: code, ...told });
  };
  /** Answers with a gateway response, and tells the log why. */
  const refuse = (
    response: ServerResponse,
    request: IncomingMessage,
    routed: RoutedRequest | undefined,
    type: GatewayResponseType,
    details: RefusalDetails,
  ) => {
    const answer = gatewayResponse(type);
    send(response, answer);
    tell(request, routed, answer, { errorType: type, reason: gatewayRefusalReasons[type], ...details });
  };
  return { tell, refuse };
}

/** A 401 without calling the authorizer: no Authorization field (or an empty one), or more than one. */
function missingIdentityReason(routed: RoutedRequest): string {
  return header(routed, authorizerDefinition.identityHeader) ? 'several_authorization_fields' : 'missing_authorization_header';
}

/** What the log says of the authorizer's refusal: for "Unauthorized", why, as the key store tells it (local/refusal-log.ts). */
async function refusalByAuthorizer(options: LocalGatewayOptions, type: GatewayResponseType, identity: string): Promise<RefusalDetails> {
  return (type === 'UNAUTHORIZED' ? await options.unauthorizedReason?.(identity) : undefined) ?? {};
}

/**
 * What the log says of a function's own answer: for its 401, why, as for the
 * authorizer's. A function answers 401 only for a key revoked or expired since
 * the authorizer's Allow was cached (the limiter learns it at the key's next
 * request: docs/clients.md): the same refusal, learnt later, with the same reason.
 */
async function refusalByFunction(options: LocalGatewayOptions, answer: APIGatewayProxyResult, identity: string): Promise<RefusalDetails> {
  return (answer.statusCode === 401 ? await options.unauthorizedReason?.(identity) : undefined) ?? {};
}

type RefusalDetails = Partial<Pick<Refusal, 'errorType' | 'reason' | 'principalId'>>;

/** Why the gateway answered a type, where its Error object's code does not say it. */
const gatewayRefusalReasons: Partial<Record<GatewayResponseType, string>> = {
  UNAUTHORIZED: 'refused_by_authorizer',
  ACCESS_DENIED: 'key_suspended',
  THROTTLED: 'usage_plan_throttle',
  QUOTA_EXCEEDED: 'usage_plan_quota',
  AUTHORIZER_FAILURE: 'authorizer_failed',
  AUTHORIZER_CONFIGURATION_ERROR: 'authorizer_did_not_answer',
  INTEGRATION_FAILURE: 'function_failed',
  INTEGRATION_TIMEOUT: 'integration_timeout',
};

/** The access log's request fields: for a request no route matched, its method and path (never its query, which a client may fill with anything). */
function requestFields(request: IncomingMessage, routed: RoutedRequest | undefined) {
  return {
    requestId: routed?.requestContext.requestId ?? randomUUID(),
    ip: request.socket.remoteAddress ?? '127.0.0.1',
    httpMethod: request.method ?? 'GET',
    resourcePath: routed?.compiled.route.path ?? new URL(request.url ?? '/', 'http://localhost').pathname,
  };
}

/** The Error object's code of an answer, or `unknown` for a body that is none. */
function errorCodeOf(answer: APIGatewayProxyResult): string {
  try {
    const { code } = JSON.parse(answer.body ?? '') as { code?: unknown };
    return typeof code === 'string' ? code : 'unknown';
  } catch {
    return 'unknown';
  }
}

const TIMED_OUT = Symbol('timed out');

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(TIMED_OUT), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The body, or 'too_large' when it is over the limit (the firewall's, or API
 * Gateway's payload limit without it). A body over the limit is still read to
 * its end, and dropped, before the answer, up to API Gateway's 10 MB payload
 * limit (API_GATEWAY_MAX_PAYLOAD_BYTES; "Quotas for configuring and running a
 * REST API in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html): an answer mid-upload, then a close,
 * resets the connection under a client that sends its whole body before it
 * reads (Node's fetch got EPIPE and no status at all). Past 10 MB the answer
 * comes at once, and the rest is read and dropped until the client stops: what
 * API Gateway does with the bytes past its limit is not documented, and it
 * answers past that limit only (docs/api-gateway-behaviour.md, "Request bodies").
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
      if (size > API_GATEWAY_MAX_PAYLOAD_BYTES) resolve('too_large');
    });
    request.on('end', () => resolve(size > maxBytes ? 'too_large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/**
 * 413 (WAF's answer, or API Gateway's without the firewall), then the connection closes once the client
 * has sent its whole body (at once for a body read to its end).
 */
function refuseTooLarge(
  request: IncomingMessage,
  response: ServerResponse,
  firewall: boolean,
  tell: ReturnType<typeof operatorLog>['tell'],
): void {
  const [answer, errorType] = firewall ? [oversizeBodyAnswer, 'WAF_FILTERED'] : [gatewayResponse('REQUEST_TOO_LARGE'), 'REQUEST_TOO_LARGE'];
  tell(request, undefined, answer, { errorType, reason: 'body_too_large' });
  response.shouldKeepAlive = false;
  send(response, answer);
  if (request.complete) return;
  request.on('end', () => request.socket.destroy());
}

/**
 * A request Node's HTTP parser refused before the gateway saw it: a method it
 * does not know (FOO) gets the answer to any unknown method, headers past
 * API Gateway's 10,240 bytes a 400 Error object; the connection then closes.
 */
function answerUnparsableRequest(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const answer =
    error.code === 'HPE_INVALID_METHOD'
      ? gatewayResponse('MISSING_AUTHENTICATION_TOKEN')
      : errorAnswer(
          error.code === 'HPE_HEADER_OVERFLOW'
            ? `The request line and headers are too large: at most ${MAX_HEADER_BYTES} bytes.`
            : 'The request is not valid HTTP/1.1.',
        );
  const body = Buffer.from(answer.body);
  const head = [
    `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode] ?? ''}`,
    ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${body.length}`,
    'Connection: close',
  ].join('\r\n');
  socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body]));
}

function errorAnswer(message: string) {
  const body = errorBody('invalid_request', message);
  return { statusCode: body.status, headers: { 'Content-Type': 'application/json' } as Record<string, string>, body: JSON.stringify(body) };
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
