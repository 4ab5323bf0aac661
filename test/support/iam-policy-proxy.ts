import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { accessOfFunction, lambdaFunctions } from '../../definitions/routes';
import { grantAllows, grantStatements, type TableAccess } from '../../definitions/table-grants';
import { type TableName, tables } from '../../definitions/tables';
import { answerDynamoDbError, inputOf, type LoopbackServer, listenOnLoopback, operationOf, readRequestBody } from './dynamodb-proxy';

/**
 * An IAM policy simulator: an HTTP proxy in front of DynamoDB Local (which
 * checks no permission) that refuses every call a function of the API makes
 * outside the grants of its route (definitions/routes.ts → the statements of
 * definitions/table-grants.ts, the ones the CDK stack writes into the
 * function's role), as IAM would refuse it in AWS, and records every call each
 * function makes.
 *
 * - Who calls: the access key id of the request's SigV4 `Credential=`. The local
 *   runtime gives each function process its function's name as access key id
 *   (local/lambda-runtime.ts); a test that runs a handler in its own process
 *   signs as that function too (test/support/dynamo.ts `asFunction`). Any other
 *   identity (the tests' own setup, the key tool) is an administrator here:
 *   forwarded, not recorded.
 * - What each call needs: `dynamodb:<Operation>` on the table's ARN, or on
 *   `<table ARN>/index/<name>` for a Query or Scan of an index; BatchGetItem and
 *   BatchWriteItem on each table they name; a TransactWriteItems item the action
 *   of its kind (PutItem, UpdateItem, DeleteItem, ConditionCheckItem) and a
 *   TransactGetItems item GetItem ("Using IAM with DynamoDB transactions",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
 * - The refusal is DynamoDB's: HTTP 400 `AccessDeniedException`, a client error
 *   the SDKs do not retry ("Error handling with DynamoDB",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html),
 *   with IAM's message "User: … is not authorized to perform: dynamodb:<Action> on
 *   resource: …". Nothing of a refused call reaches DynamoDB Local.
 *
 * Tables are told apart by their names' last part (`<prefix>-pets` → pets:
 * local/tables.ts). Loopback only.
 */
export interface IamCall {
  /** The function: an operationId, or `authorizer`. */
  principal: string;
  action: string;
  table: TableName;
  index?: string;
  allowed: boolean;
  /** How many such calls were made. */
  count: number;
}

/** What one call asks of IAM: an action on a table, or on one of its indexes. */
export interface RequiredPermission {
  action: string;
  /** The table's physical name, as the request gives it. */
  tableName: string;
  index?: string;
}

/** Every Lambda function of the API, by the name it signs with. */
const functionNames: readonly string[] = lambdaFunctions.map(({ name }) => name);

export class IamPolicyProxy {
  /** The calls the functions made, refused or not: one entry per function, action, table and index. */
  private readonly seen = new Map<string, IamCall>();

  private constructor(
    private readonly loopback: LoopbackServer,
    private readonly upstream: URL,
    private readonly accessOf: (principal: string) => TableAccess | undefined,
  ) {}

  /**
   * Starts the proxy. `accessOf` gives a function's grants (the route table's, unless a
   * test hands other ones, e.g. with a grant removed); undefined for a caller that is no function.
   */
  static async start(
    upstreamEndpoint: string,
    accessOf: (principal: string) => TableAccess | undefined = (principal) =>
      functionNames.includes(principal) ? accessOfFunction(principal) : undefined,
  ): Promise<IamPolicyProxy> {
    let proxy: IamPolicyProxy | undefined;
    const loopback = await listenOnLoopback((request, response) => void proxy!.handle(request, response));
    proxy = new IamPolicyProxy(loopback, new URL(upstreamEndpoint), accessOf);
    return proxy;
  }

  get endpoint(): string {
    return this.loopback.endpoint;
  }

  /** Every kind of call the functions made, refused or not. */
  calls(): IamCall[] {
    return [...this.seen.values()];
  }

  /** The calls IAM would have refused. */
  refused(): IamCall[] {
    return this.calls().filter((call) => !call.allowed);
  }

  close(): Promise<void> {
    return this.loopback.close();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readRequestBody(request);
    if (!body) return void request.destroy();
    const principal = principalOf(request);
    const access = this.accessOf(principal);
    if (access) {
      for (const needed of requiredPermissions(operationOf(request), inputOf(body))) {
        const table = logicalTableOf(needed.tableName);
        const allowed = table !== undefined && grantAllows(access, needed.action, table, needed.index);
        if (table) this.record({ principal, action: needed.action, table, index: needed.index, allowed });
        if (!allowed) return refuse(response, principal, needed);
      }
    }
    this.forward(request, body, response);
  }

  private record(call: Omit<IamCall, 'count'>): void {
    const id = [call.principal, call.action, call.table, call.index, call.allowed].join(' ');
    const entry = this.seen.get(id) ?? { ...call, count: 0 };
    entry.count++;
    this.seen.set(id, entry);
  }

  /** Sends the request on as it came, and DynamoDB's answer back as it comes (status, headers, body streamed). */
  private forward(request: IncomingMessage, body: Buffer, response: ServerResponse): void {
    const upstream = httpRequest(
      { hostname: this.upstream.hostname, port: this.upstream.port, path: request.url, method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
        answer.on('error', () => request.socket.destroy());
      },
    );
    upstream.on('error', () => request.socket.destroy());
    // A client that gave up (its timeout) closes its side: so does the proxy.
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  }
}

/** The access key id of a SigV4 `Authorization` header: `… Credential=<id>/<date>/<region>/dynamodb/aws4_request, …`. */
export function principalOf(request: IncomingMessage): string {
  return /Credential=([^/,\s]+)\//.exec(String(request.headers.authorization ?? ''))?.[1] ?? '';
}

/** What a call needs from IAM: one permission per table (and index) it touches, one per item of a transaction. */
export function requiredPermissions(operation: string, input: Record<string, unknown>): RequiredPermission[] {
  const onTable = (action: string, item: { TableName?: unknown }) => ({ action: `dynamodb:${action}`, tableName: String(item.TableName) });
  if (operation === 'Query' || operation === 'Scan') {
    return [{ ...onTable(operation, input), ...(input.IndexName ? { index: String(input.IndexName) } : {}) }];
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.keys((input.RequestItems ?? {}) as object).map((tableName) => ({ action: `dynamodb:${operation}`, tableName }));
  }
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const actionOf: Record<string, string> = {
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      ConditionCheck: 'ConditionCheckItem',
      Get: 'GetItem',
    };
    return ((input.TransactItems ?? []) as Record<string, { TableName?: unknown }>[]).flatMap((item) =>
      Object.entries(item).map(([kind, action]) => onTable(actionOf[kind] ?? kind, action)),
    );
  }
  return [onTable(operation, input)];
}

/** The table of definitions/tables.ts a physical name stands for (`<prefix>-<table>`), if any. */
export function logicalTableOf(tableName: string): TableName | undefined {
  const last = tableName.split('-').pop() ?? '';
  return Object.hasOwn(tables, last) ? (last as TableName) : undefined;
}

/** Every grant of every function, one row per (function, action, table or its indexes): what the IAM test expects to see used. */
export function everyGrant(accessOf: (principal: string) => TableAccess = accessOfFunction): string[] {
  return functionNames.flatMap((principal) =>
    grantStatements(accessOf(principal)).flatMap((statement) =>
      statement.actions.map((action) => grantRow(principal, action, statement.table, statement.on === 'indexes')),
    ),
  );
}

/** How a grant (or the use of one) is written in the IAM test's lists. */
export function grantRow(principal: string, action: string, table: TableName, onIndexes: boolean): string {
  return `${principal}: ${action} on ${table}${onIndexes ? '/index/*' : ''}`;
}

/** Refused as IAM refuses: DynamoDB answers 400 AccessDeniedException naming the action and the resource. */
function refuse(response: ServerResponse, principal: string, needed: RequiredPermission): void {
  const resource = `arn:aws:dynamodb:local:000000000000:table/${needed.tableName}${needed.index ? `/index/${needed.index}` : ''}`;
  answerDynamoDbError(
    response,
    400,
    'AccessDeniedException',
    `User: arn:aws:sts::000000000000:assumed-role/${principal}/${principal} is not authorized to perform: ${needed.action} on resource: ${resource} because no identity-based policy allows the ${needed.action} action`,
    { namespace: 'com.amazon.coral.service', requestId: 'iam-policy-simulator' },
  );
}
