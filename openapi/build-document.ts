import type * as z from 'zod';
import type { ErrorCode } from '../definitions/error-codes';
import { errorCodes } from '../definitions/error-codes';
import { gatewayResponses } from '../definitions/gateway-responses';
import { operationContracts } from '../definitions/operations';
import { LOCAL_SERVER_URL } from '../definitions/operations/code-samples';
import type { JsonSchema, OperationContract } from '../definitions/operations/operation-contract';
import { BAN_DURATION_SECONDS, plans } from '../definitions/plans';
import { maxRequestBodyBytes } from '../definitions/request-size-limits';
import { authorizer, type Deprecation, type OperationId, type RouteDefinition, routes, stageName } from '../definitions/routes';
import {
  functionHeadersPresence,
  gatewayAnswerToUnknownRoutes,
  gatewayStatus,
  type HeaderPresence,
  headerPresence,
  rateLimitHeadersPresence,
  type StatusSources,
  statusSourcesOf,
} from './responses';
import { componentSchemas, ERROR_SCHEMA_ID, inlineSchema, schemaRef } from './schemas';

/**
 * The OpenAPI 3.1 document of the API, built from the route table, the error
 * codes, the gateway responses, the plans and the zod schemas the handlers
 * validate with. `npm run openapi` writes it to openapi/openapi.json; a test
 * fails when that file differs from what this function returns.
 */
export type OpenApiDocument = Record<string, unknown> & {
  openapi: '3.1.0';
  paths: Record<string, Record<string, OperationObject>>;
};
export interface OperationObject extends Record<string, unknown> {
  operationId: OperationId;
  responses: Record<string, ResponseObject>;
}
export interface ResponseObject extends Record<string, unknown> {
  description: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, { schema: JsonSchema }>;
}
export interface HeaderObject {
  description: string;
  required: boolean;
  schema: JsonSchema;
}
type HeaderDocs = Record<string, Omit<HeaderObject, 'required'>>;

/** The interface version (spec, part 9); the path carries only its major version. */
export const INTERFACE_VERSION = '1.0.0';
export const BEARER_SCHEME = 'bearerAuth';
const JSON_MEDIA_TYPE = 'application/json';
/**
 * The other request media types a JSON body may be sent as (functions/http/api-handler.ts,
 * jsonBody): any structured-syntax `+json` type (RFC 6839), e.g. application/merge-patch+json.
 */
const JSON_SUFFIX_MEDIA_RANGE = 'application/*+json';
const PETS_TAG = 'Pets';

export function buildOpenApiDocument(): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, OperationObject>)[route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Pet Store API',
      version: INTERFACE_VERSION,
      summary: 'A pet store catalogue over HTTP with JSON bodies: list, add and fetch pets.',
      description: overview(),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: servers(),
    security: [{ [BEARER_SCHEME]: [] }],
    tags: [{ name: PETS_TAG, description: 'The animals of the catalogue.' }],
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        [BEARER_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'psk_ followed by 43 random characters',
          description: `\`Authorization: Bearer <API_KEY>\` on every operation: the scheme in any case, one or more spaces, then the key (RFC 6750 section 2.1, RFC 9110 section 11.1); every form is the same key, with the same limits. A tab, two keys in one field, another scheme or two Authorization fields get 401, as does a missing, empty, malformed, unknown or revoked key (or a rotated one past its grace period), with \`WWW-Authenticate: Bearer\`. A suspended key gets 429 \`key_suspended\`, not 401. API Gateway caches the authorizer's answer per Authorization value for ${authorizer.resultsCacheTtlSeconds} seconds; a revoked key, or a key moved to another plan, takes effect at the key's next request all the same (the functions read it).`,
        },
      },
    },
    // OpenAPI has no place for what the gateway answers outside the paths above.
    'x-unknown-route-response': gatewayErrorResponse(gatewayAnswerToUnknownRoutes),
  };
}

/** Every parameter of an operation, in the order path, query, header, each documented by its contract. */
function parametersOf(contract: OperationContract): unknown[] {
  const parts = [
    ['path', contract.request.path],
    ['query', contract.request.query],
    ['header', contract.request.headers],
  ] as const;
  const parameters: unknown[] = [];
  const named = new Set<string>();
  for (const [location, schema] of parts) {
    for (const [name, valueSchema] of Object.entries(schema?.shape ?? {}) as [string, z.ZodType][]) {
      const docs = contract.parameters?.[name];
      if (!docs) throw new Error(`The contract of ${contract.operationId} does not document its ${location} parameter ${name}`);
      named.add(name);
      parameters.push({
        name,
        in: location,
        // A parameter with a default, or an optional one, need not be sent.
        required: location === 'path' || !valueSchema.safeParse(undefined).success,
        description: docs.description,
        schema: docs.schema ?? inlineSchema(valueSchema, 'output'),
        ...(docs.example !== undefined ? { example: docs.example } : {}),
      });
    }
  }
  const stray = Object.keys(contract.parameters ?? {}).filter((name) => !named.has(name));
  if (stray.length > 0)
    throw new Error(`The contract of ${contract.operationId} documents parameters it does not take: ${stray.join(', ')}`);
  return parameters;
}

/** The JSON body, in every media type the functions accept as JSON. */
function requestBodyOf(contract: OperationContract): unknown {
  const { body, bodyDescription } = contract.request;
  if (!body) return undefined;
  const schema = inlineSchema(body, 'input');
  return {
    required: true,
    ...(bodyDescription ? { description: bodyDescription } : {}),
    content: { [JSON_MEDIA_TYPE]: { schema }, [JSON_SUFFIX_MEDIA_RANGE]: { schema } },
  };
}

function operationOf(route: RouteDefinition): OperationObject {
  const contract = operationContracts[route.operationId];
  const parameters = parametersOf(contract);
  const requestBody = requestBodyOf(contract);
  const operation: OperationObject = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.deprecation ? `${deprecationNotice(route.deprecation)}\n\n${contract.description}` : contract.description,
    tags: [PETS_TAG],
    security: [{ [BEARER_SCHEME]: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: Object.fromEntries(
      statusSourcesOf(route.operationId).map((sources) => [String(sources.status), responseOf(route, contract, sources)]),
    ),
    'x-codeSamples': [
      { lang: 'Shell', label: 'curl', source: contract.samples.curl },
      { lang: 'JavaScript', label: '@petstore/client', source: contract.samples.client },
    ],
  };
  if (route.deprecation) {
    operation.deprecated = true;
    operation['x-deprecated-at'] = route.deprecation.deprecatedAt;
    operation['x-sunset'] = route.deprecation.sunsetAt;
    operation['x-successor'] = `GET ${route.deprecation.successorPath}`;
  }
  return operation;
}

function deprecationNotice({ deprecatedAt, sunsetAt, successorPath }: Deprecation): string {
  return `**Deprecated** since ${deprecatedAt.slice(0, 10)}; removed on ${sunsetAt.slice(0, 10)} (Sunset: ${httpDate(sunsetAt)}). Use \`GET ${successorPath}\` with the \`status\` filter instead. Every response of this operation's function carries \`Deprecation\` (RFC 9745), \`Sunset\` (RFC 8594) and \`Link: <…${successorPath}>; rel="successor-version"\`; the answers API Gateway gives by itself (a 401 for a missing or refused key, its own 429 and 5xx) and the edge (a 413 for a body over ${maxRequestBodyBytes / 1024} KiB) do not. From the sunset instant on it answers 410 \`gone\`.`;
}

function responseOf(route: RouteDefinition, contract: OperationContract, sources: StatusSources): ResponseObject {
  const headers: Record<string, HeaderObject> = {};
  const add = (presence: HeaderPresence, entries: HeaderDocs) => {
    if (!presence.documented) return;
    for (const [name, header] of Object.entries(entries)) headers[name] = { ...header, required: presence.required };
  };
  add(rateLimitHeadersPresence(sources), rateLimitHeaders());
  add(headerPresence(sources, 'Retry-After'), {
    'Retry-After': {
      description: 'Seconds to wait before sending another request (never less).',
      schema: { type: 'integer', minimum: 1 },
    },
  });
  add(headerPresence(sources, 'WWW-Authenticate'), {
    'WWW-Authenticate': {
      description: 'The authentication scheme to use (RFC 6750).',
      schema: { type: 'string', const: gatewayResponses.UNAUTHORIZED.headers?.['WWW-Authenticate'] },
    },
  });
  if (route.deprecation) add(functionHeadersPresence(sources), deprecationHeaders(route.deprecation));
  if (sources.status === contract.success.status) {
    for (const [name, header] of Object.entries(contract.success.headers ?? {})) headers[name] = { ...header };
  }

  const isSuccess = sources.status < 400;
  return {
    description: isSuccess ? contract.success.description : errorDescription(contract, sources),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: {
      [JSON_MEDIA_TYPE]: {
        schema: isSuccess ? inlineSchema(contract.success.schema, 'output') : errorSchemaFor(sources.status, sources.codes),
      },
    },
  };
}

function rateLimitHeaders(): HeaderDocs {
  return {
    'X-RateLimit-Limit': {
      description:
        "The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute.",
      schema: { type: 'integer', minimum: 1 },
    },
    'X-RateLimit-Remaining': {
      description: 'Requests left in that window after this one.',
      schema: { type: 'integer', minimum: 0 },
    },
    'X-RateLimit-Reset': {
      description: 'Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends).',
      schema: { type: 'integer', minimum: 0 },
    },
  };
}

function deprecationHeaders(deprecation: Deprecation): HeaderDocs {
  const escaped = deprecation.successorPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    Deprecation: {
      description: `RFC 9745: deprecated since ${deprecation.deprecatedAt}.`,
      schema: { type: 'string', const: `@${Date.parse(deprecation.deprecatedAt) / 1000}` },
    },
    Sunset: {
      description: 'RFC 8594: when the operation stops working; from then on it answers 410.',
      schema: { type: 'string', const: httpDate(deprecation.sunsetAt) },
    },
    Link: {
      description: `The replacement, \`GET ${deprecation.successorPath}\`, as an absolute URL.`,
      schema: { type: 'string', pattern: `^<[^>]+${escaped}>; rel="successor-version"$` },
    },
  };
}

/** The Error object, narrowed to the codes and the status of one response. */
function errorSchemaFor(status: number, codes: ErrorCode[]): JsonSchema {
  return {
    allOf: [
      { $ref: schemaRef(ERROR_SCHEMA_ID) },
      { properties: { code: codes.length === 1 ? { const: codes[0] } : { enum: codes }, status: { const: status } } },
    ],
  };
}

function errorDescription(contract: OperationContract, sources: StatusSources): string {
  const codes = sources.codes.map((code) => `\`${code}\``).join(', ');
  const text: Record<number, string> = {
    400: 'A parameter, header or body field is missing, malformed or invalid; the message names it. Nothing was changed.',
    401: 'The API key is missing, empty, malformed, unknown or revoked, or a rotated key is past its grace period. Answered by API Gateway, without rate-limit or deprecation headers; or, for a key revoked or past its grace since the gateway cached its check, by the function of the operation at the next request of the key, without rate-limit headers. A key suspended for calling on after its 429s gets 429 `key_suspended`, not 401.',
    404: 'Not found.',
    410: 'The operation is past its sunset.',
    413:
      sources.functionRateLimitHeaders === undefined
        ? `The request has a body over ${maxRequestBodyBytes / 1024} KiB: refused at the edge (AWS WAF) before the key is checked, without rate-limit headers.`
        : `The body is over ${(contract.limits?.MAX_BODY_BYTES ?? 0) / 1024} KiB. A body over ${maxRequestBodyBytes / 1024} KiB is refused at the edge (AWS WAF) before the key is checked, without rate-limit headers.`,
    415: 'The body is not declared as JSON.',
    429: `\`rate_limited\`: the minute's limit is used up; \`quota_exceeded\`: the day's quota is used up (Retry-After reaches to 00:00 UTC); \`key_suspended\`: the key kept calling after its 429s and is suspended for ${BAN_DURATION_SECONDS / 60} minutes. A refused request consumes nothing. Wait Retry-After seconds before the next request. Our limiter always sends the rate-limit headers; a 429 from a backstop in front of it (API Gateway's usage-plan or stage throttling, or a per-IP firewall rule where a stage enables one) carries only Retry-After.`,
    500: 'An unexpected error. Its message says "nothing was changed" only when no write was sent; otherwise it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). Answered by the function (with rate-limit headers once the request was counted) or by API Gateway (without).',
    503: `A dependency is unavailable or too slow, or Lambda could not run the function (API Gateway's answer, without rate-limit headers). Retry after Retry-After. Nothing was changed unless the message says it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). A function's 503 may lack the rate-limit headers too, when the counters could not be read.`,
  };
  const meaning = contract.errorDescriptions?.[sources.status] ?? text[sources.status] ?? errorCodes[sources.codes[0] as ErrorCode].meaning;
  return `${codes}. ${meaning}`;
}

/** A gateway response as a Response object (its headers are static). */
function gatewayErrorResponse(type: keyof typeof gatewayResponses): ResponseObject {
  const definition = gatewayResponses[type];
  const status = gatewayStatus(type);
  const headers = Object.fromEntries(
    Object.entries(definition.headers ?? {}).map(([name, value]) => [
      name,
      { description: `Always \`${value}\`.`, required: true, schema: { type: 'string', const: value } },
    ]),
  );
  return {
    description: `\`${definition.code}\` (HTTP ${status}): any path or method not listed above, answered by API Gateway before any key check: not counted against any limit, no rate-limit headers.`,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    'x-status': status,
    content: { [JSON_MEDIA_TYPE]: { schema: errorSchemaFor(status, [definition.code]) } },
  };
}

/**
 * Where the API is: a deployed stage at the URL API Gateway gives it (the ApiUrl
 * output of its stack, PetStore-Staging or PetStore-Production), or behind the
 * custom domain a stage may have (lib/stage-config.ts); and `npm start`.
 */
function servers(): unknown[] {
  return [
    {
      url: `https://{restApiId}.execute-api.{region}.amazonaws.com/${stageName}`,
      description: "A deployed stage (staging or production) at API Gateway's own URL: the ApiUrl output of its stack.",
      variables: {
        restApiId: { default: 'abcdef1234', description: 'The REST API id of the stage (the first label of its ApiUrl).' },
        region: { default: 'eu-west-1', description: 'The AWS region the stack is deployed in.' },
      },
    },
    {
      url: `https://{domainName}/${stageName}`,
      description: 'A deployed stage behind its custom domain (base path v1), when the stage has one.',
      variables: { domainName: { default: 'api.petstore.example', description: "The stage's custom domain name." } },
    },
    { url: LOCAL_SERVER_URL, description: 'Local: npm start (DynamoDB Local).' },
  ];
}

function overview(): string {
  const planRows = Object.values(plans)
    .map(({ displayName, limits }) =>
      limits === 'custom'
        ? `| ${displayName} | agreed per customer | agreed per customer |`
        : `| ${displayName} | ${limits.perMinute.toLocaleString('en-US')} | ${limits.perDay.toLocaleString('en-US')} |`,
    )
    .join('\n');
  return `Every path below is relative to a server URL ending in \`/${stageName}\`.

## Authentication
Every operation needs \`Authorization: Bearer <API_KEY>\`; see the security scheme. A 401 carries \`WWW-Authenticate: Bearer\`; a suspended key gets 429 \`key_suspended\`, not 401.

## Errors
Every error, from our functions and from API Gateway alike, is the \`ErrorObject\` \`{"code", "message", "status"}\`, whose \`code\` is one of a closed set (see the schema). Unknown paths and methods get 404 \`not_found\` from API Gateway before any key check: they carry no rate-limit headers and count against no limit.

## Rate limits
| plan | requests per minute | requests per day |
|---|---|---|
${planRows}

Windows are fixed UTC minutes and UTC days. Every response to an identified caller carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`, describing the window closest to exhaustion. Over the limit the answer is 429 with \`Retry-After\` (seconds) and code \`rate_limited\` (minute) or \`quota_exceeded\` (day). A refused request consumes nothing.

**The ban rule.** A key whose refused requests within one UTC minute reach its per-minute limit is suspended for ${BAN_DURATION_SECONDS / 60} minutes: 429 \`key_suspended\`, with \`Retry-After\` counting down to the end.

**What a client should do.** On 429, wait \`Retry-After\` seconds before the next request (never less): a client that does can never be suspended. When retrying other failures (503 without Retry-After, network errors), back off exponentially with full jitter — wait a random time between 0 and min(cap, base × 2^attempt) — and stop after a few attempts. Retry a create only with an \`Idempotency-Key\`.

## Versioning
Interface version ${INTERFACE_VERSION}; the major version is the path segment \`/${stageName}\`. A deprecated operation says so, with its removal date, in its description and in the \`Deprecation\`, \`Sunset\` and \`Link\` headers of the responses its function gives (not of those API Gateway gives by itself).`;
}

function httpDate(iso: string): string {
  return new Date(iso).toUTCString();
}
