import type { APIGatewayProxyEvent } from 'aws-lambda';

/** A request header by name, case-insensitively (API Gateway keeps the client's casing). */
export function header(event: { headers?: Record<string, string | undefined> | null }, name: string): string | undefined {
  const headers = event.headers ?? {};
  const direct = headers[name];
  if (direct !== undefined) return direct;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

/**
 * How many field lines named `name` (in any case) the request had. API
 * Gateway's REST proxy event (payload 1.0) keeps one value of a repeated
 * header in `headers` and every value in `multiValueHeaders` ("Support for
 * multi-value headers and query string parameters", Lambda proxy integrations
 * in API Gateway,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#apigateway-multivalue-headers-and-parameters);
 * an event without `multiValueHeaders` counts its `headers`.
 */
export function fieldLineCount(
  event: { headers?: Record<string, string | undefined> | null; multiValueHeaders?: Record<string, string[] | undefined> | null },
  name: string,
): number {
  const wanted = name.toLowerCase();
  const lines = Object.entries(event.multiValueHeaders ?? {})
    .filter(([key]) => key.toLowerCase() === wanted)
    .reduce((count, [, values]) => count + (values?.length ?? 0), 0);
  return lines > 0 ? lines : header(event, name) === undefined ? 0 : 1;
}

/** A DNS name, optionally with a port (the local gateway's `localhost:3000`). */
const DOMAIN_NAME = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?(?::\d{1,5})?$/i;
/** One unreserved path segment (RFC 3986): what a stage name or base path consists of. */
const PATH_SEGMENT = /^[A-Za-z0-9._~-]+$/;
/** Only the local gateway answers on these, over plain HTTP; API Gateway is always HTTPS. */
const LOOPBACK_HOST = /^(?:localhost|127\.0\.0\.1)(?::\d+)?$/;

const segments = (path: string): string[] => path.split('/').filter((segment) => segment.length > 0);

/**
 * The absolute URL of the API's stage as the client called it, e.g.
 * `https://api.example.com/v1`, built only from what API Gateway itself sets
 * in the request context — never from the client's Host or X-Forwarded-*
 * headers, which anyone can forge.
 *
 * AWS: requestContext.domainName is "the full domain name used to invoke the
 * API", requestContext.path the request path including the stage (execute-api)
 * or the custom domain's base path, and resourcePath the resource template
 * (Variables for data transformations for API Gateway,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html;
 * Lambda proxy integrations in API Gateway, input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html).
 * The top-level `path` excludes the stage on execute-api but includes the base
 * path on a custom domain, so it is not used. The prefix is what precedes the
 * resource's segments in requestContext.path: `/v1` on execute-api (the stage),
 * `/v1` behind a custom domain with base path `v1`, nothing with an empty base path.
 */
export function stageBaseUrl(event: APIGatewayProxyEvent): string {
  const context = event.requestContext;
  const domainName = context.domainName ?? '';
  if (!DOMAIN_NAME.test(domainName)) throw new Error(`The request context has no usable domainName: ${JSON.stringify(domainName)}.`);
  const requestSegments = segments(context.path ?? '');
  const resourceSegments = segments(context.resourcePath ?? event.resource ?? '');
  const prefix = requestSegments.slice(0, Math.max(0, requestSegments.length - resourceSegments.length));
  // A prefix API Gateway cannot have produced (the path does not hold the
  // resource's segments): fall back to the stage, as on execute-api.
  const basePath = prefix.every((segment) => PATH_SEGMENT.test(segment)) ? prefix : [context.stage];
  const scheme = LOOPBACK_HOST.test(domainName) ? 'http' : 'https';
  return `${scheme}://${domainName.toLowerCase()}${basePath.map((segment) => `/${segment}`).join('')}`;
}
