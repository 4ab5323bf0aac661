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
 * The absolute URL of the API's stage as the client called it, e.g.
 * `https://api.example.com/v1`. requestContext.path is the full path the client
 * used (stage or base path included) and event.path the path below it, so the
 * difference is the prefix whatever domain or base path mapping is in front.
 */
export function stageBaseUrl(event: APIGatewayProxyEvent): string {
  const protocol = header(event, 'X-Forwarded-Proto') ?? 'https';
  const host = header(event, 'Host') ?? event.requestContext.domainName ?? 'localhost';
  const fullPath = event.requestContext.path ?? event.path;
  const prefix = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : '';
  return `${protocol}://${host}${prefix}`;
}
