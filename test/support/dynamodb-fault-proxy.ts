import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { answerDynamoDbError, type LoopbackServer, listenOnLoopback, operationOf, readRequestBody } from './dynamodb-proxy';

/**
 * An HTTP proxy in front of DynamoDB Local that injects the failures real
 * DynamoDB and real networks produce, per operation and table:
 *
 * - `late`: forwards the call, then holds DynamoDB's answer for `delayMs`
 *   (longer than the SDK's request timeout: the write lands, the client gives up);
 * - `drop`: forwards the call, then destroys the connection instead of answering
 *   (the write lands, the answer is lost);
 * - `reset`, `http500`, `throughput`, `throttling`: refuses before forwarding
 *   (nothing reaches DynamoDB).
 *
 * and, on the answer of a call that reached DynamoDB (its write has landed):
 *
 * - `resetMidAnswer`: sends DynamoDB's status line, headers and half the body,
 *   then resets the connection (TCP RST);
 * - `stallAfterHeaders`: sends DynamoDB's status line and headers, then nothing
 *   (the connection stays open until the client gives up);
 * - `truncatedBody`: sends the headers (with the full Content-Length) and half
 *   the body, then closes the connection cleanly (TCP FIN);
 * - `errorAfterWrite`: answers the InternalServerError 500 although the write landed.
 *
 * The two throttling faults answer with DynamoDB's JSON error shape: HTTP 400,
 * `Content-Type: application/x-amz-json-1.0`, body `{"__type":
 * "com.amazonaws.dynamodb.v20120810#<Name>","message":…}` ("Error handling with
 * DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html:
 * ProvisionedThroughputExceededException and ThrottlingException are 400s
 * the SDKs retry). `http500` is the InternalServerError 500 of the same page,
 * whose outcome the page calls unknown for a write.
 *
 * For the rate limiter's counters (ExtraFaultKind, separate so other modes add beside them):
 *
 * - `transactionConflict`: refuses before forwarding with `TransactionConflictException`
 *   (HTTP 400), what DynamoDB answers a PutItem, UpdateItem or DeleteItem on an item
 *   that an ongoing TransactWriteItems holds ("Transaction conflict handling in
 *   DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling;
 *   the SDKs do not retry it);
 * - `slowForward`: holds the request `delayMs` before forwarding it (default 2,500 ms):
 *   the SDK gives up on it and retries, and this first attempt lands after the retry.
 *   `settled()` waits until every held request has reached DynamoDB and been answered.
 *
 * Loopback only; bodies over 1 MiB are refused; the log keeps the last 10,000 calls.
 */
export type FaultKind = 'late' | 'drop' | 'reset' | 'http500' | 'throughput' | 'throttling';
export const faultKinds: readonly FaultKind[] = ['late', 'drop', 'reset', 'http500', 'throughput', 'throttling'];
export type ExtraFaultKind = 'transactionConflict' | 'slowForward';

/** Faults on the answer of a call that was forwarded: DynamoDB did the work, the client cannot know it. */
export type LandedFaultKind = 'resetMidAnswer' | 'stallAfterHeaders' | 'truncatedBody' | 'errorAfterWrite';
export const landedFaultKinds: readonly LandedFaultKind[] = ['resetMidAnswer', 'stallAfterHeaders', 'truncatedBody', 'errorAfterWrite'];
const isLandedFault = (kind: string): kind is LandedFaultKind => (landedFaultKinds as readonly string[]).includes(kind);

export interface FaultRule {
  kind: FaultKind | ExtraFaultKind | LandedFaultKind;
  /** The operation, e.g. `PutItem` (the part of X-Amz-Target after the dot); any when absent. */
  operation?: string;
  /** A table the call touches (TableName, or any table of a TransactWriteItems); any when absent. */
  table?: string;
  /** Only calls whose request body contains this text (e.g. an attribute its update expression names); any when absent. */
  bodyIncludes?: string;
  /** Lets this many matching calls through untouched first. Default 0. */
  skip?: number;
  /** Then applies to the next `times` matching calls, then to none. Default 1. */
  times?: number;
  /** For `late`: how long DynamoDB's answer is held back (default 1,500 ms); for `slowForward`: how long the request is held (default 2,500 ms). */
  delayMs?: number;
}

export interface ProxiedCall {
  operation: string;
  tables: string[];
  /** The fault applied, if any. */
  fault?: FaultKind | ExtraFaultKind | LandedFaultKind;
  /** Whether the call reached DynamoDB. */
  forwarded: boolean;
}

const MAX_LOG = 10_000;

export class DynamoDbFaultProxy {
  /** Every call seen, oldest first. */
  readonly calls: ProxiedCall[] = [];
  private rules: { rule: FaultRule; skip: number; left: number }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Requests held by `slowForward`, until DynamoDB has answered them. */
  private readonly held = new Set<Promise<void>>();

  private constructor(
    private readonly loopback: LoopbackServer,
    private readonly upstream: URL,
  ) {}

  static async start(upstreamEndpoint: string): Promise<DynamoDbFaultProxy> {
    let proxy: DynamoDbFaultProxy | undefined;
    const loopback = await listenOnLoopback((request, response) => void proxy!.handle(request, response));
    proxy = new DynamoDbFaultProxy(loopback, new URL(upstreamEndpoint));
    return proxy;
  }

  get endpoint(): string {
    return this.loopback.endpoint;
  }

  /** Adds faults; each applies to `times` matching calls after the first `skip`. */
  inject(...rules: FaultRule[]): void {
    this.rules.push(...rules.map((rule) => ({ rule, skip: rule.skip ?? 0, left: rule.times ?? 1 })));
  }

  /** Removes every fault not used up yet, and forgets the log. */
  clear(): void {
    this.rules = [];
    this.calls.length = 0;
  }

  /** Calls of this operation (and table) that reached DynamoDB. */
  forwarded(operation: string, table?: string): ProxiedCall[] {
    return this.calls.filter((call) => call.forwarded && call.operation === operation && (!table || call.tables.includes(table)));
  }

  /** Waits until every request held by `slowForward` has been forwarded and answered. */
  async settled(): Promise<void> {
    while (this.held.size > 0) await Promise.all([...this.held]);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readRequestBody(request);
    if (!body) return void request.destroy();
    const operation = operationOf(request);
    const tables = tablesOf(body);
    const fault = this.takeFault(operation, tables, body.toString('utf8'));
    if (fault?.kind === 'transactionConflict' || fault?.kind === 'slowForward')
      return this.extraFault(fault, operation, tables, request, body, response);
    this.record({
      operation,
      tables,
      fault: fault?.kind,
      forwarded: fault === undefined || fault.kind === 'late' || fault.kind === 'drop' || isLandedFault(fault.kind),
    });
    if (fault && !['late', 'drop'].includes(fault.kind) && !isLandedFault(fault.kind))
      return refuse(fault.kind as FaultKind, request, response);
    this.forward(request, body, response, fault);
  }

  private extraFault(
    fault: FaultRule,
    operation: string,
    tables: string[],
    request: IncomingMessage,
    body: Buffer,
    response: ServerResponse,
  ): void {
    this.record({ operation, tables, fault: fault.kind, forwarded: fault.kind === 'slowForward' });
    if (fault.kind === 'transactionConflict') {
      awsError(response, 400, 'TransactionConflictException', 'Transaction is ongoing for the item (injected)');
      return;
    }
    const held = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        // Forwarded even though the client gave up meanwhile: the write lands late.
        this.forward(request, body, response, undefined, resolve);
      }, fault.delayMs ?? 2_500);
      this.timers.add(timer);
    });
    this.held.add(held);
    void held.then(() => this.held.delete(held));
  }

  private takeFault(operation: string, tables: string[], body: string): FaultRule | undefined {
    const match = this.rules.find(
      ({ rule, left }) =>
        left > 0 &&
        (!rule.operation || rule.operation === operation) &&
        (!rule.table || tables.includes(rule.table)) &&
        (!rule.bodyIncludes || body.includes(rule.bodyIncludes)),
    );
    if (!match) return undefined;
    if (match.skip > 0) {
      match.skip -= 1;
      return undefined;
    }
    match.left -= 1;
    return match.rule;
  }

  private record(call: ProxiedCall): void {
    this.calls.push(call);
    if (this.calls.length > MAX_LOG) this.calls.shift();
  }

  private forward(
    request: IncomingMessage,
    body: Buffer,
    response: ServerResponse,
    fault: FaultRule | undefined,
    /** Called once DynamoDB has answered (or the upstream call failed). */
    answered: () => void = () => {},
  ): void {
    const upstream = httpRequest(
      { hostname: this.upstream.hostname, port: this.upstream.port, path: request.url, method: request.method, headers: request.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          answered();
          // The write has landed in DynamoDB by now; only the answer is at stake.
          if (fault?.kind === 'drop') return void request.socket.destroy();
          if (fault && isLandedFault(fault.kind)) return spoilAnswer(fault.kind, request, response, answer, Buffer.concat(chunks));
          const send = () => {
            if (response.destroyed) return;
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            response.end(Buffer.concat(chunks));
          };
          if (fault?.kind !== 'late') return send();
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            send();
          }, fault.delayMs ?? 1_500);
          this.timers.add(timer);
        });
      },
    );
    upstream.on('error', () => {
      answered();
      request.socket.destroy();
    });
    upstream.end(body);
  }
}

/** Sends DynamoDB's answer damaged as `kind` says (the call has landed). */
function spoilAnswer(
  kind: LandedFaultKind,
  request: IncomingMessage,
  response: ServerResponse,
  answer: IncomingMessage,
  body: Buffer,
): void {
  if (kind === 'errorAfterWrite')
    return void awsError(response, 500, 'InternalServerError', 'Internal server error (injected after the write)');
  const { 'transfer-encoding': _chunked, ...headers } = answer.headers;
  response.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(body.length) });
  if (kind === 'stallAfterHeaders') return void response.flushHeaders();
  const half = body.subarray(0, Math.floor(body.length / 2));
  // Written straight to the socket once the headers are out, so that nothing is buffered in between.
  // A moment after the first half, as a connection lost mid-answer: the client is reading the body by then.
  response.write(half, () => {
    const timer = setTimeout(() => (kind === 'resetMidAnswer' ? request.socket.resetAndDestroy() : request.socket.end()), 50);
    request.socket.once('close', () => clearTimeout(timer));
  });
}

function tablesOf(body: Buffer): string[] {
  try {
    const json = JSON.parse(body.toString('utf8')) as {
      TableName?: string;
      TransactItems?: Record<string, { TableName?: string }>[];
      RequestItems?: Record<string, unknown>;
    };
    const names = new Set<string>();
    if (json.TableName) names.add(json.TableName);
    for (const item of json.TransactItems ?? [])
      for (const action of Object.values(item)) if (action.TableName) names.add(action.TableName);
    for (const name of Object.keys(json.RequestItems ?? {})) names.add(name);
    return [...names];
  } catch {
    return [];
  }
}

function refuse(kind: FaultKind, request: IncomingMessage, response: ServerResponse): void {
  if (kind === 'reset') {
    request.socket.resetAndDestroy();
    return;
  }
  if (kind === 'http500') {
    return void awsError(response, 500, 'InternalServerError', 'Internal server error (injected)');
  }
  const name = kind === 'throughput' ? 'ProvisionedThroughputExceededException' : 'ThrottlingException';
  awsError(response, 400, name, `${name} (injected)`);
}

function awsError(response: ServerResponse, status: number, name: string, message: string): void {
  answerDynamoDbError(response, status, name, message);
}
