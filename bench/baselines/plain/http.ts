import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

const statusCodes: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
};

export function error(status: number, message: string, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return json(status, { code: statusCodes[status] ?? 'internal_error', message, status }, headers);
}

export function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

export function stageUrl(event: APIGatewayProxyEvent): string {
  return `${header(event, 'X-Forwarded-Proto') ?? 'https'}://${header(event, 'Host') ?? 'localhost'}/${event.requestContext.stage}`;
}
