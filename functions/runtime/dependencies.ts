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
 * DynamoDB client with deliberate time budgets: a request that cannot connect in
 * 1 s or answer in 2 s is abandoned, and at most 3 attempts are made, so an
 * operation gives up well inside the Lambda timeout (10 s) and answers 503.
 */
export function createDocumentClient(
  options: { endpoint?: string; region?: string; credentials?: { accessKeyId: string; secretAccessKey: string } } = {},
): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    ...options,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000 },
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
