import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * What the test proxies in front of DynamoDB Local share (the fault proxy, the
 * partition-limit simulator, the IAM policy simulator): a loopback HTTP server
 * that can be closed with its connections, the reading of a DynamoDB JSON
 * request, and DynamoDB's error answer.
 */
export interface LoopbackServer {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  /** Destroys every open connection and stops listening. */
  close(): Promise<void>;
}

export async function listenOnLoopback(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    server,
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** DynamoDB requests are small JSON documents; anything over this is refused by the proxies. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

/** The whole request body, or undefined when it is over MAX_REQUEST_BYTES or the request failed. */
export function readRequestBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) resolve(undefined);
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', () => resolve(undefined));
  });
}

/** The DynamoDB operation of a request, e.g. `PutItem` (the part of X-Amz-Target after the dot). */
export function operationOf(request: IncomingMessage): string {
  return (
    String(request.headers['x-amz-target'] ?? '')
      .split('.')
      .pop() ?? ''
  );
}

/** The request's JSON input, or {} when it is not JSON (DynamoDB Local then answers it). */
export function inputOf(body: Buffer): Record<string, unknown> {
  try {
    return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/**
 * DynamoDB's error answer: `Content-Type: application/x-amz-json-1.0` and a body
 * `{"__type": "<namespace>#<Name>", "message": …}` ("Error handling with DynamoDB",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html).
 */
export function answerDynamoDbError(
  response: ServerResponse,
  status: number,
  name: string,
  message: string,
  options: { namespace?: string; requestId?: string; extra?: Record<string, unknown> } = {},
): void {
  const body = JSON.stringify({
    __type: `${options.namespace ?? 'com.amazonaws.dynamodb.v20120810'}#${name}`,
    message,
    ...options.extra,
  });
  response.writeHead(status, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': Buffer.byteLength(body),
    'x-amzn-RequestId': options.requestId ?? 'injected',
  });
  response.end(body);
}
