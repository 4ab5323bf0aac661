import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { gatewayResponses } from '../../definitions/gateway-responses';
import type { OperationContract, RequestPart } from '../../definitions/operations/operation-contract';
import type { Deprecation, OperationId, RouteDefinition } from '../../definitions/routes';
import { authorizer, routeFor } from '../../definitions/routes';
import { onlyReadsOutside } from '../../definitions/table-grants';
import { ApiError, DependencyUnavailableError } from '../domain/errors';
import { parseOrThrow } from '../domain/validation';
import { type CounterStore, RateLimiter, type Verdict } from '../rate-limit';
import { type Dependencies, TIME_BUDGET_GUARD_MS } from '../runtime/dependencies';
import { logger } from '../runtime/logger';
import { metrics, recordAnswer, recordResponse } from '../runtime/metrics';
import { soleAuthorization } from './bearer-token';
import { type Caller, callerFrom } from './caller';
import { asBodyError, refuseRepeatedOrPrototypeMembers } from './json-body';
import { fieldLineCount, header, stageBaseUrl } from './request';
import { errorResponse, type UnexpectedErrorOutcome } from './responses';

/** One DynamoDB call at its worst (DYNAMODB_CALL_BUDGET, about 2.2 s; a stalled body adds up to 1 s), plus the time-budget guard. */
const REFUND_TIME_NEEDED_MS = 3_000;

export type ApiEvent = APIGatewayProxyEvent;
export type ApiResult = APIGatewayProxyResult;

/** What an operation's logic receives: the event, its parts parsed with the contract's schemas, and the caller. */
export interface OperationInput<Contract extends OperationContract> {
  event: ApiEvent;
  query: RequestPart<Contract, 'query'>;
  path: RequestPart<Contract, 'path'>;
  headers: RequestPart<Contract, 'headers'>;
  body: RequestPart<Contract, 'body'>;
  caller: Caller;
  context: Context;
}

type ApiRequest = Request<ApiEvent, ApiResult, Error, Context, ApiInternal>;
interface ApiInternal extends Record<string, unknown> {
  /** Headers every response of this request carries, errors included. */
  responseHeaders: Record<string, string>;
  caller?: Caller;
  /** The limiter's verdict, still under way while a read-only operation reads (settled: it never rejects). */
  pendingVerdict?: Promise<PromiseSettledResult<Verdict>>;
  /** The request's verdict, once it was counted: what settles it when it is answered 503. */
  verdict?: Verdict;
  /** Set when the logic of an operation that writes has started: from then on a write may have been sent. */
  writeMayHaveBeenSent?: boolean;
}

/**
 * Builds the Lambda handler of one operation. The middleware stack, in order:
 * response envelope (error mapping, shared headers, request log, metrics) →
 * one Authorization field → deprecation headers → rate limit → sunset (so a 410 carries rate-limit
 * headers) → JSON body checks, then middy's JSON body parser (for operations with a body) → request
 * parsing with the contract's schemas (a 400 names the field) → logic.
 *
 * An operation that only reads (its route grants nothing but GetItem and Query
 * outside the rate-limit table) reads while the limiter counts: one round trip
 * of wall time instead of two. The verdict still decides the answer: a refused
 * request answers 429 and what was read is dropped; a failed count answers 503.
 * A refusal the instance already knows of (a window it saw used up) reads nothing.
 */
export function createApiHandler<Contract extends OperationContract>(
  contract: Contract,
  dependencies: Dependencies,
  /** The rate-limit counters (the limiter's port, functions/rate-limit/counter-store.ts), wired by the operation's handler factory. */
  counters: CounterStore,
  logic: (input: OperationInput<Contract>) => Promise<ApiResult>,
) {
  const { operationId } = contract;
  const route = routeFor(operationId);

  // middy's own timeoutEarly (a timer and a race per request, 5 ms before the timeout) is off: withinTimeBudget, below, answers first.
  const handler = middy<ApiEvent, ApiResult, Error, Context, ApiInternal>({ timeoutEarlyInMillis: 0 }).use(
    responseEnvelope(operationId, dependencies),
  );
  handler.use(oneAuthorizationField());
  if (route.deprecation) handler.use(deprecationHeaders(route.deprecation));
  // One limiter per handler, so per instance: it holds the leases of its keys and remembers windows seen used up.
  const limiter = new RateLimiter(counters, (message, error) =>
    logger.warn(message, { error: error instanceof Error ? error : String(error) }),
  );
  handler.use(rateLimit(limiter, dependencies, { overlapWithRead: onlyReads(route) }));
  if (route.deprecation) handler.use(sunset(route.deprecation, dependencies));
  if (contract.request.body) handler.use(jsonBody(maxBodyBytesOf(contract))).use(parsedByMiddy());
  const writes = !onlyReads(route);
  // Last before the logic: from here on, an operation that writes may have sent a write.
  if (writes) handler.use(writesFromHere());
  const run = handler.handler((event, context) => {
    // Present: the rate-limit middleware refused the request otherwise.
    const caller = callerFrom(event) as Caller;
    return logic({ event, ...parseRequest(contract, event), caller, context });
  });
  // A request that writes and is cut short may have written: never "nothing was changed" for it.
  const outcomeIfCutShort = writes ? 'change_unknown' : 'unchanged';
  return (event: ApiEvent, context: Context) => {
    const startedAt = dependencies.clock();
    return withinTimeBudget(run(event, context), context, () => {
      const response = errorResponse(new DependencyUnavailableError(new Error('function time budget exhausted'), outcomeIfCutShort));
      logger.warn('request cut short at the time budget', { operation: operationId, requestId: context.awsRequestId });
      recordResponse(metrics, response, callerFrom(event));
      recordAnswer(response.statusCode, dependencies.clock() - startedAt);
      return response;
    });
  };
}

/**
 * The whole request — the rate-limit calls before the logic, the logic, the
 * refund after it — answers by the function's timeout minus the guard. (middy's
 * own timeoutEarly races only the logic, not the middleware around it.) The
 * work cut short is not undone: each DynamoDB call is bounded on its own, and
 * the 503 says what the client may assume.
 */
export function withinTimeBudget(
  answer: Promise<ApiResult>,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
  cutShort: () => ApiResult,
): Promise<ApiResult> {
  // One promise settled by whichever comes first (not a race of two): the timer costs no promise of its own.
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(cutShort()), Math.max(0, context.getRemainingTimeInMillis() - TIME_BUDGET_GUARD_MS));
    answer.then(
      (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function maxBodyBytesOf(contract: OperationContract): number {
  const limit = contract.limits?.MAX_BODY_BYTES;
  if (limit === undefined) throw new Error(`${contract.operationId} takes a body but its contract sets no MAX_BODY_BYTES`);
  return limit;
}

/** The query, path parameters, headers and (already JSON-parsed) body, each through its schema; a part without one is undefined. */
function parseRequest<Contract extends OperationContract>(contract: Contract, event: ApiEvent) {
  const { query, path, headers, body } = contract.request;
  return {
    query: (query ? parseOrThrow(query, singleValuedQuery(event, Object.keys(query.shape)), 'query') : undefined) as RequestPart<
      Contract,
      'query'
    >,
    path: (path ? parseOrThrow(path, event.pathParameters ?? {}, 'path') : undefined) as RequestPart<Contract, 'path'>,
    headers: (headers
      ? parseOrThrow(headers, singleValuedHeaders(event, Object.keys(headers.shape)), 'headers')
      : undefined) as RequestPart<Contract, 'headers'>,
    // middy's JSON body parser replaced the text with the parsed value.
    body: (body ? parseOrThrow(body, event.body as unknown, 'request body') : undefined) as RequestPart<Contract, 'body'>,
  };
}

/**
 * The query parameters an operation takes, each sent once: a repeated one is a
 * 400 naming it (decision 4), never silently its last value.
 *
 * AWS: for a repeated key, `queryStringParameters` holds only the last value and
 * `multiValueQueryStringParameters` every value (Lambda proxy integrations in
 * API Gateway, "Support for multi-value headers and query string parameters",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#apigateway-multivalue-headers-and-parameters).
 */
function singleValuedQuery(event: ApiEvent, names: readonly string[]): Record<string, string | undefined> {
  for (const name of names) {
    if ((event.multiValueQueryStringParameters?.[name]?.length ?? 0) > 1) {
      throw new ApiError(
        'invalid_request',
        `${name} must be sent once; it was sent ${event.multiValueQueryStringParameters?.[name]?.length} times.`,
      );
    }
  }
  return event.queryStringParameters ?? {};
}

/**
 * The request headers an operation takes, each sent once (decision 21). Those
 * are structured fields whose value is one Item (the IETF httpapi draft's
 * `Idempotency-Key`): a recipient joins repeated field lines with commas
 * before parsing, an Item followed by `, …` fails to parse, and a failed
 * parse is ignored or the message treated as malformed (RFC 9651, section 4.2).
 * Ignoring it would create without the protection the client asked for: a
 * 400 naming the field. API Gateway's `headers` hold only the last value;
 * `multiValueHeaders` tells (request.ts, fieldLineCount).
 */
function singleValuedHeaders(event: ApiEvent, names: readonly string[]): Record<string, string | undefined> {
  for (const name of names) {
    const fields = fieldLineCount(event, name);
    if (fields > 1) throw new ApiError('invalid_request', `${name} must be sent once; it was sent ${fields} times.`);
  }
  return Object.fromEntries(names.map((name) => [name, header(event, name)]));
}

function internal(request: ApiRequest): ApiInternal {
  request.internal.responseHeaders ??= {};
  return request.internal as ApiInternal;
}

function responseEnvelope(
  operationId: OperationId,
  dependencies: Dependencies,
): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  const finish = (request: ApiRequest, startedAt: number) => {
    const response = request.response ?? errorResponse(request.error, outcomeOf(request));
    request.response = { ...response, headers: { ...response.headers, ...internal(request).responseHeaders } };
    const { statusCode } = request.response;
    const latencyMs = dependencies.clock() - startedAt;
    // A success is told by the access log (request id, status, key, latency) and the metric line below; every
    // other answer gets this line too, with API Gateway's request ids, as the access log has them.
    if (statusCode >= 400) {
      const { requestId = request.context.awsRequestId, extendedRequestId } = request.event.requestContext ?? {};
      const keyId = internal(request).caller?.keyId;
      logger.info('request', { operation: operationId, requestId, extendedRequestId, keyId, statusCode, latencyMs });
    }
    recordResponse(metrics, request.response, internal(request).caller);
    // The canary's line, with PetsCreated when this request created a customer's pet.
    recordAnswer(statusCode, latencyMs);
  };
  return {
    before: (request) => {
      request.internal.startedAt = dependencies.clock();
    },
    after: (request) => finish(request, Number(request.internal.startedAt)),
    onError: (request) => {
      request.response = errorResponse(request.error, outcomeOf(request));
      finish(request, Number(request.internal.startedAt));
    },
  };
}

function writesFromHere(): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  return {
    before: (request) => {
      internal(request).writeMayHaveBeenSent = true;
    },
  };
}

/** What an unexpected error may claim: nothing changed only while no write can have been sent. */
function outcomeOf(request: ApiRequest): UnexpectedErrorOutcome {
  return internal(request).writeMayHaveBeenSent ? 'change_unknown' : 'unchanged';
}

/**
 * Two Authorization fields: the gateway's own 401, before the limiter counts
 * anything. The authorizer refuses them whenever it runs (http/bearer-token.ts,
 * soleAuthorization), but API Gateway may answer from the Allow it cached for
 * one of the values instead: its cache is keyed by the identity source, and
 * which value of a repeated header that is, AWS does not document.
 */
function oneAuthorizationField(): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  const refusal = gatewayResponses.UNAUTHORIZED;
  return {
    before: (request) => {
      const name = authorizer.identityHeader;
      if (header(request.event, name) === undefined || soleAuthorization(request.event, name) !== undefined) return;
      Object.assign(internal(request).responseHeaders, refusal.headers);
      throw new ApiError(refusal.code, refusal.message);
    },
  };
}

/** RFC 9745 Deprecation, RFC 8594 Sunset and a successor Link on every response of a deprecated operation. */
function deprecationHeaders(definition: Deprecation): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  const deprecatedAtSeconds = Date.parse(definition.deprecatedAt) / 1000;
  const sunsetHttpDate = new Date(definition.sunsetAt).toUTCString();
  return {
    before: (request) => {
      Object.assign(internal(request).responseHeaders, {
        Deprecation: `@${deprecatedAtSeconds}`,
        Sunset: sunsetHttpDate,
        Link: `<${stageBaseUrl(request.event)}${definition.successorPath}>; rel="successor-version"`,
      });
    },
  };
}

/** From the sunset instant on, a deprecated operation answers 410 (after the rate limit, so with its headers). */
function sunset(definition: Deprecation, dependencies: Dependencies): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  const sunsetAtMs = Date.parse(definition.sunsetAt);
  return {
    before: () => {
      if (dependencies.clock() >= sunsetAtMs) {
        throw new ApiError(
          'gone',
          `This operation was removed on ${new Date(sunsetAtMs).toUTCString()}. Use GET ${definition.successorPath} instead.`,
        );
      }
    },
  };
}

/** Whether an operation's function only reads outside the rate-limit table, so its logic may run alongside the count. */
export function onlyReads(route: RouteDefinition): boolean {
  return onlyReadsOutside(route.access, 'rateLimits');
}

/**
 * Counts the request before the logic runs, or — for read-only operations —
 * starts counting and lets the logic read meanwhile; `after` and `onError`
 * then wait for the decision, which wins over whatever the logic produced.
 */
function rateLimit(
  limiter: RateLimiter,
  dependencies: Dependencies,
  options: { overlapWithRead: boolean },
): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  // before and after return a promise only when there is something to wait for: middy awaits only a promise.
  return {
    before: (request) => {
      const caller = callerFrom(request.event);
      if (!caller) throw new ApiError('unauthorized', 'Missing or invalid API key.');
      internal(request).caller = caller;
      const now = dependencies.clock();
      // A refusal this instance already knows of: no read is sent for it.
      const overlap = options.overlapWithRead && !limiter.knowsRefusal(caller, now);
      const counting = limiter.admit(caller, now);
      if (!overlap) return counting.then((verdict) => applyVerdict(request, verdict));
      // Not awaited here: the logic reads meanwhile. Settled, so that a failed count is never an unhandled rejection.
      internal(request).pendingVerdict = counting.then(
        (value): PromiseSettledResult<Verdict> => ({ status: 'fulfilled', value }),
        (reason: unknown): PromiseSettledResult<Verdict> => ({ status: 'rejected', reason }),
      );
    },
    // The logic answered: a refusal or a failed count replaces its response (thrown, so onError maps it).
    after: (request) => (internal(request).pendingVerdict ? settleRateLimit(request) : undefined),
    onError: async (request) => {
      try {
        await settleRateLimit(request);
      } catch (decisionError) {
        // 503 when counting failed, 429 when refused: either takes precedence over the logic's error.
        request.error = decisionError as Error;
      }
      await settleIfUnavailable(request);
    },
  };
}

/**
 * A request answered 503 is not charged (docs/clients.md, "Plans and rate limits": "Counting: each request once"), if one more
 * DynamoDB call still fits before the Lambda timeout (else the 503 would be lost).
 */
async function settleIfUnavailable(request: ApiRequest): Promise<void> {
  const { verdict } = internal(request);
  if (!(request.error instanceof DependencyUnavailableError) || !verdict) return;
  if (request.context.getRemainingTimeInMillis() < REFUND_TIME_NEEDED_MS) return;
  internal(request).verdict = undefined;
  await verdict.refund().catch((error: unknown) => {
    logger.warn('rate-limit refund failed', { error: error instanceof Error ? error : String(error) });
  });
  Object.assign(internal(request).responseHeaders, verdict.headers);
}

/** Waits for a count started alongside the read, and applies its decision. */
async function settleRateLimit(request: ApiRequest): Promise<void> {
  const pending = internal(request).pendingVerdict;
  if (!pending) return;
  internal(request).pendingVerdict = undefined;
  const outcome = await pending;
  if (outcome.status === 'rejected') throw outcome.reason;
  applyVerdict(request, outcome.value);
}

function applyVerdict(request: ApiRequest, verdict: Verdict): void {
  internal(request).verdict = verdict;
  Object.assign(internal(request).responseHeaders, verdict.headers);
  if (verdict.refusal) throw verdict.refusal;
}

/**
 * A JSON request body: at most maxBodyBytes (413), present (400), declared as JSON
 * by one Content-Type field (415), valid JSON (400), and no member named twice or
 * `__proto__` (400 naming it) — in that order (decision 12; json-body.ts). Then
 * middy's JSON body parser replaces the text with the parsed value.
 */
function jsonBody(maxBodyBytes: number): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  return {
    before: (request) => {
      const { event } = request;
      const raw = event.body ?? '';
      const size = event.isBase64Encoded ? Buffer.from(raw, 'base64').length : Buffer.byteLength(raw);
      if (size > maxBodyBytes) {
        throw new ApiError(
          'payload_too_large',
          `The request body is ${size} bytes; the limit is ${maxBodyBytes} bytes (${maxBodyBytes / 1024} KiB).`,
        );
      }
      if (size === 0) throw new ApiError('invalid_request', 'A JSON request body is required.');
      refuseUnlessJsonContentType(event);
      refuseRepeatedOrPrototypeMembers(event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw);
    },
  };
}

/**
 * Content-Type names one JSON media type (decision 12). Sent twice, it names
 * none: it is a singleton field (RFC 9110, section 8.3), which a sender "MUST
 * NOT" repeat (section 5.3), and recipients that pick the first or the last
 * read one body two ways (section 8.3) — 415, whatever the values (decision 17).
 */
function refuseUnlessJsonContentType(event: ApiEvent): void {
  const fields = fieldLineCount(event, 'Content-Type');
  if (fields > 1) {
    throw new ApiError('unsupported_media_type', `Content-Type must be sent once; it was sent ${fields} times.`);
  }
  const contentType = header(event, 'Content-Type');
  if (!contentType || !/^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i.test(contentType)) {
    throw new ApiError('unsupported_media_type', 'The request body must be sent with Content-Type: application/json.');
  }
}

/**
 * middy's JSON body parser (@middy/http-json-body-parser), its failures
 * answered as decision 12 answers them (json-body.ts, asBodyError). Its own
 * Content-Type check is off: jsonBody checked the field before, in any case of
 * its name and sent once, where the parser reads only `content-type` and
 * `Content-Type` as spelt.
 */
function parsedByMiddy(): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> {
  const parser = httpJsonBodyParser<ApiEvent>({ disableContentTypeCheck: true });
  return {
    before: (request) => {
      try {
        parser.before?.(request);
      } catch (error) {
        throw asBodyError(error);
      }
    },
  };
}
