import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeApiGateway } from './fake-api-gateway';

/**
 * The control plane a deployed stage offers the key tool, over HTTP, for a
 * child process whose AWS SDK is pointed here with AWS_ENDPOINT_URL (the SDKs'
 * configured endpoints, https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html):
 * CloudFormation's DescribeStacks (the awsQuery protocol: a form body, an XML
 * answer) with the stacks and outputs given, and API Gateway's API keys and
 * usage plans (its REST JSON protocol: lists under `item`, errors named by
 * `x-amzn-ErrorType`, a 429's wait in `Retry-After`) answered by a FakeApiGateway. Nothing else: a call the
 * tool should not make is a 404 the tool would report.
 */
export interface FakeStack {
  name: string;
  status: string;
  outputs: Record<string, string>;
}

export interface FakeControlPlane {
  endpoint: string;
  close(): Promise<void>;
}

export async function startFakeControlPlane(gateway: FakeApiGateway, stacks: FakeStack[]): Promise<FakeControlPlane> {
  const server = createServer((request, response) => {
    answer(request, response, gateway, stacks).catch((error: Error) => sendJson(response, 500, { message: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}

async function answer(request: IncomingMessage, response: ServerResponse, gateway: FakeApiGateway, stacks: FakeStack[]): Promise<void> {
  const body = await readBody(request);
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (request.method === 'POST' && url.pathname === '/') {
    describeStacks(new URLSearchParams(body), response, stacks);
    return;
  }
  const call = apiGatewayCall(request.method ?? 'GET', url, body ? JSON.parse(body) : {});
  if (!call) {
    sendJson(response, 404, { message: `No route ${request.method} ${url.pathname}` }, 'NotFoundException');
    return;
  }
  try {
    const output = (await gateway.call(call.command, call.input)) as Record<string, unknown>;
    sendJson(response, call.status, 'items' in output ? { item: output.items } : output);
  } catch (error) {
    const { name, message, retryAfterSeconds } = error as Error & { retryAfterSeconds?: string };
    sendJson(response, errorStatuses[name] ?? 400, { message }, name, retryAfterSeconds);
  }
}

/** API Gateway's status for each error it names (Amazon API Gateway REST API Reference, each call's Errors); others are 400. */
const errorStatuses: Partial<Record<string, number>> = {
  NotFoundException: 404,
  ConflictException: 409,
  TooManyRequestsException: 429,
  LimitExceededException: 429,
};

/** The API Gateway REST routes the key tool uses, as (command, SDK input, success status). */
function apiGatewayCall(method: string, url: URL, json: Record<string, unknown>) {
  const query = Object.fromEntries(url.searchParams);
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const route = `${method} /${parts.map((part, index) => (index % 2 === 1 ? '{}' : part)).join('/')}`;
  const [, first, , second] = parts;
  const listing = { limit: query.limit ? Number(query.limit) : undefined, position: query.position };
  const routes: Record<string, [string, Record<string, unknown>, number]> = {
    'POST /apikeys': ['CreateApiKeyCommand', json, 201],
    'GET /apikeys': ['GetApiKeysCommand', { ...listing, nameQuery: query.name, includeValues: query.includeValues === 'true' }, 200],
    'PATCH /apikeys/{}': ['UpdateApiKeyCommand', { ...json, apiKey: first }, 200],
    'DELETE /apikeys/{}': ['DeleteApiKeyCommand', { apiKey: first }, 202],
    'POST /usageplans': ['CreateUsagePlanCommand', json, 201],
    'GET /usageplans': ['GetUsagePlansCommand', { ...listing, keyId: query.keyId }, 200],
    'PATCH /usageplans/{}': ['UpdateUsagePlanCommand', { ...json, usagePlanId: first }, 200],
    'DELETE /usageplans/{}': ['DeleteUsagePlanCommand', { usagePlanId: first }, 202],
    'POST /usageplans/{}/keys': ['CreateUsagePlanKeyCommand', { ...json, usagePlanId: first }, 201],
    'DELETE /usageplans/{}/keys/{}': ['DeleteUsagePlanKeyCommand', { usagePlanId: first, keyId: second }, 202],
  };
  const found = routes[route];
  return found && { command: found[0], input: found[1], status: found[2] };
}

function describeStacks(form: URLSearchParams, response: ServerResponse, stacks: FakeStack[]): void {
  if (form.get('Action') !== 'DescribeStacks') {
    sendQueryError(response, 'InvalidAction', `${form.get('Action')} is not served`);
    return;
  }
  const stack = stacks.find((candidate) => candidate.name === form.get('StackName'));
  if (!stack) {
    sendQueryError(response, 'ValidationError', `Stack with id ${form.get('StackName')} does not exist`);
    return;
  }
  const outputs = Object.entries(stack.outputs)
    .map(([key, value]) => `<member><OutputKey>${xml(key)}</OutputKey><OutputValue>${xml(value)}</OutputValue></member>`)
    .join('');
  sendXml(
    response,
    200,
    `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>` +
      `<StackName>${xml(stack.name)}</StackName><StackId>arn:aws:cloudformation:eu-west-1:123456789012:stack/${xml(stack.name)}/${randomUUID()}</StackId>` +
      `<CreationTime>2029-01-01T00:00:00Z</CreationTime><StackStatus>${xml(stack.status)}</StackStatus><Outputs>${outputs}</Outputs>` +
      `</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></DescribeStacksResponse>`,
  );
}

function sendQueryError(response: ServerResponse, code: string, message: string): void {
  sendXml(
    response,
    400,
    `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xml(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  );
}

function sendXml(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'Content-Type': 'text/xml', 'x-amzn-RequestId': randomUUID() });
  response.end(text);
}

function sendJson(response: ServerResponse, status: number, value: unknown, errorType?: string, retryAfterSeconds?: string): void {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'x-amzn-RequestId': randomUUID() };
  if (errorType) headers['x-amzn-ErrorType'] = errorType;
  // The SDK reads a 429's retryAfterSeconds from this header.
  if (retryAfterSeconds) headers['Retry-After'] = retryAfterSeconds;
  response.writeHead(status, headers);
  response.end(status === 202 ? '' : JSON.stringify(value));
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
