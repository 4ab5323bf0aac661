import type { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type TableName, tables } from '../../definitions/tables';
import type { PetLayout } from '../data/pet-layout';
import { type Clock, systemClock } from './clock';

/** Everything a handler needs from outside: injected, so tests and the local runtime choose. */
export interface Dependencies {
  db: DynamoDBDocumentClient;
  tableNames: Record<TableName, string>;
  clock: Clock;
  /** How pets, ids and list shards are laid out: the deployed layout when absent (the scale run scales its blocks down). */
  petLayout?: PetLayout;
}

/**
 * The time budget of one DynamoDB call: connect within 500 ms, headers within
 * 1 s of the attempt's start and the whole body within 500 ms more
 * (DYNAMODB_BODY_TIMEOUT_MS), at most 2 attempts (the SDK's standard retry, with jittered backoff, also
 * for throttling) — about 2.2 s at worst when no answer comes, 3.2 s when
 * answers stall after their headers. A failed call ends the operation (503
 * with Retry-After), after at most one clean-up call (a rate-limit refund, an
 * idempotency lease release), so a failing operation answers within about 5 to
 * 7 s; whatever happens, the time-budget guard (TIME_BUDGET_GUARD_MS, in
 * functions/http/api-handler.ts and the authorizer) answers 503 before the
 * Lambda timeout (definitions/routes.ts).
 *
 * The SDK may repeat any call whose answer it lost after the call landed, so
 * every call on a request path is safe to repeat, and one budget fits them all:
 * - reads (GetItem, Query): repeating changes nothing;
 * - counter updates, refusals, refunds: conditional on a per-request id they
 *   also write, so a repeat fails its condition and is recognised as ours;
 * - pet and idempotency-record writes: conditional on the item being absent,
 *   and a repeat finds our own item (write token, pet id) and succeeds;
 * - the id-block reservation (ADD): a repeat reserves another block and the
 *   first is skipped (ids are never reused, gaps are allowed);
 * - suspensions and lease releases: plain SETs of the same values.
 */
export const DYNAMODB_CALL_BUDGET = { connectionTimeoutMs: 500, requestTimeoutMs: 1_000, maxAttempts: 2 } as const;

/**
 * How long before the Lambda timeout a request (or an authorizer call) still being served is answered
 * 503 instead: a function that runs out its timeout is killed, and API Gateway
 * answers a bare 502 ("Handling Lambda errors with an API Gateway API",
 * https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html).
 */
export const TIME_BUDGET_GUARD_MS = 500;

/** After the headers, the rest of DynamoDB's answer must arrive within this (see boundEachAttempt). */
export const DYNAMODB_BODY_TIMEOUT_MS = 500;

export type DynamoDbCallBudget = { [K in keyof typeof DYNAMODB_CALL_BUDGET]: number };

/**
 * How every DynamoDB client of the project is built: the functions', the local
 * gateway's, the key tool's, the scripts', the tests' and the bench's.
 */
export interface DynamoDbClientOptions {
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /**
   * How long one call may take and how often it is tried. Unset: DYNAMODB_CALL_BUDGET,
   * what deployed functions use; tests on a loaded machine may allow more.
   * 'sdk-defaults': the SDK's own retries and no timeouts, for work someone waits
   * on rather than a request path (the key tool on AWS, table set-up, a test's checks).
   */
  budget?: DynamoDbCallBudget | 'sdk-defaults';
}

/** The plain client, for what the document client does not send (CreateTable, DescribeTable) or a caller that wraps it later. */
export function createDynamoDbClient(options: DynamoDbClientOptions = {}): DynamoDBClient {
  const { budget = DYNAMODB_CALL_BUDGET, ...clientOptions } = options;
  if (budget === 'sdk-defaults') return new DynamoDBClient(clientOptions);
  const client = new DynamoDBClient({
    ...clientOptions,
    maxAttempts: budget.maxAttempts,
    requestHandler: {
      connectionTimeout: budget.connectionTimeoutMs,
      requestTimeout: budget.requestTimeoutMs,
      // Without this, today's SDK only logs a warning when requestTimeout passes
      // and keeps waiting: a hung DynamoDB would hang the function.
      throwOnRequestTimeout: true,
    },
  });
  boundEachBody(client, DYNAMODB_BODY_TIMEOUT_MS);
  return client;
}

/** The document client over a plain one; undefined attributes are left out, as the repositories expect. */
export function documentClientOver(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** The client the repositories take (functions/data/). */
export function createDocumentClient(options: DynamoDbClientOptions = {}): DynamoDBDocumentClient {
  return documentClientOver(createDynamoDbClient(options));
}

/**
 * The SDK's requestTimeout ends when the headers arrive: a body that stalls
 * after them would be waited for until the socket's idle timeout (minutes).
 * This per-attempt step (inside the SDK's retry, just before the HTTP handler)
 * destroys a body not read in full `bodyMs` after the headers, so the attempt
 * fails as a TimeoutError, which the SDK retries like any other timeout.
 */
function boundEachBody(client: DynamoDBClient, bodyMs: number): void {
  client.middlewareStack.addRelativeTo(
    ((next: (args: unknown) => Promise<{ response: unknown }>) => async (args: unknown) => {
      const result = await next(args);
      const body = (result.response as { body?: Readable }).body;
      if (body && typeof body.destroy === 'function' && !body.readableEnded && !body.destroyed) {
        const timer = setTimeout(
          () =>
            body.destroy(
              Object.assign(new Error(`DynamoDB's answer stopped after its headers for ${bodyMs} ms`), { name: 'TimeoutError' }),
            ),
          bodyMs,
        );
        body.once('close', () => clearTimeout(timer));
        body.once('end', () => clearTimeout(timer));
      }
      return result;
    }) as unknown as Parameters<DynamoDBClient['middlewareStack']['addRelativeTo']>[0],
    { relation: 'after', toMiddleware: 'deserializerMiddleware', name: 'boundBodyMiddleware', override: true },
  );
}

/** Table names from the environment, as the CDK stack sets them on each function. */
export function tableNamesFromEnvironment(env: NodeJS.ProcessEnv = process.env): Record<TableName, string> {
  const names = {} as Record<TableName, string>;
  for (const [name, table] of Object.entries(tables) as [TableName, (typeof tables)[TableName]][]) {
    names[name] = env[table.envVar] ?? '';
  }
  return names;
}

/**
 * Set only by the local runtime (local/lambda-runtime.ts), never by the stack:
 * a DynamoDB call budget for tests on a loaded machine, where DynamoDB Local
 * can take over a second to answer. JSON of the three DYNAMODB_CALL_BUDGET fields.
 */
export const CALL_BUDGET_VARIABLE = 'PETSTORE_LOCAL_DYNAMODB_CALL_BUDGET';

/** The budget the environment names, else the deployed one. A malformed value stops the function at init. */
export function callBudgetFromEnvironment(env: NodeJS.ProcessEnv = process.env): DynamoDbCallBudget {
  const text = env[CALL_BUDGET_VARIABLE];
  if (!text) return DYNAMODB_CALL_BUDGET;
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const budget = Object.fromEntries(Object.keys(DYNAMODB_CALL_BUDGET).map((field) => [field, parsed[field]]));
  if (!Object.values(budget).every((value) => Number.isInteger(value) && (value as number) > 0)) {
    throw new Error(`${CALL_BUDGET_VARIABLE} must give ${Object.keys(DYNAMODB_CALL_BUDGET).join(', ')} as positive integers`);
  }
  return budget as DynamoDbCallBudget;
}

/** What a deployed function runs with; built once per container, at init. */
export function dependenciesFromEnvironment(): Dependencies {
  return { db: createDocumentClient({ budget: callBudgetFromEnvironment() }), tableNames: tableNamesFromEnvironment(), clock: systemClock };
}
