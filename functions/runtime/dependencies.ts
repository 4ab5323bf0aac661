import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tables, type TableName } from '../../definitions/tables';
import { type Clock, systemClock } from './clock';

/** Everything a handler needs from outside: injected, so tests and the local runtime choose. */
export interface Dependencies {
  db: DynamoDBDocumentClient;
  tableNames: Record<TableName, string>;
  clock: Clock;
}

/**
 * The time budget of one DynamoDB call: connect within 500 ms, answer within
 * 1 s, at most 2 attempts (the SDK's standard retry, with jittered backoff, also
 * for throttling) — about 2.2 s at worst. An operation makes at most 4 calls on
 * its request path (authorizer aside), so it gives up well inside the Lambda
 * timeout (definitions/routes.ts) and answers 503 with Retry-After; the middy
 * timeout guard answers 503 even if the budget were ever exceeded.
 */
export const DYNAMODB_CALL_BUDGET = { connectionTimeoutMs: 500, requestTimeoutMs: 1_000, maxAttempts: 2 } as const;

export type DynamoDbCallBudget = { [K in keyof typeof DYNAMODB_CALL_BUDGET]: number };

export function createDocumentClient(
  options: {
    endpoint?: string;
    region?: string;
    credentials?: { accessKeyId: string; secretAccessKey: string };
    /** Tests on a loaded machine may allow more; deployed functions use DYNAMODB_CALL_BUDGET. */
    budget?: DynamoDbCallBudget;
  } = {},
): DynamoDBDocumentClient {
  const { budget = DYNAMODB_CALL_BUDGET, ...clientOptions } = options;
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
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** Table names from the environment, as the CDK stack sets them on each function. */
export function tableNamesFromEnvironment(env: NodeJS.ProcessEnv = process.env): Record<TableName, string> {
  const names = {} as Record<TableName, string>;
  for (const [name, table] of Object.entries(tables) as [TableName, (typeof tables)[TableName]][]) {
    names[name] = env[table.envVar] ?? '';
  }
  return names;
}

/** What a deployed function runs with; built once per container, at init. */
export function dependenciesFromEnvironment(): Dependencies {
  return { db: createDocumentClient(), tableNames: tableNamesFromEnvironment(), clock: systemClock };
}
