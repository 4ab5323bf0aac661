import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { type TableDefinition, type TableName, tables } from '../definitions/tables';

/** Table names for a prefix, e.g. `petstore-local` → `petstore-local-pets`. */
export function tableNamesFor(prefix: string): Record<TableName, string> {
  const names = {} as Record<TableName, string>;
  for (const name of Object.keys(tables) as TableName[]) names[name] = `${prefix}-${name}`;
  return names;
}

/**
 * Creates the tables of definitions/tables.ts that do not exist yet (as the CDK
 * stack would). `timeToLive: false` leaves TTL off: for tests, whose instants may
 * lie anywhere in time while DynamoDB Local's sweeper deletes by the real clock.
 */
export async function ensureTables(
  client: DynamoDBClient,
  names: Record<TableName, string>,
  options: { timeToLive?: boolean } = {},
): Promise<void> {
  for (const [name, definition] of Object.entries(tables) as [TableName, TableDefinition][]) {
    const tableName = names[name];
    const existing = await described(client, tableName);
    if (existing) {
      await addMissingIndexes(client, tableName, definition, existing);
      continue;
    }
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName, definition)));
    } catch (error) {
      // Another `npm start` on a shared DynamoDB (AWS_ENDPOINT_URL_DYNAMODB) created it meanwhile.
      if (error instanceof ResourceInUseException) continue;
      throw error;
    }
    if (definition.timeToLiveAttribute && options.timeToLive !== false) {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: definition.timeToLiveAttribute, Enabled: true },
        }),
      );
    }
  }
}

async function described(client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

/**
 * Creates the indexes definitions/tables.ts gained since a table was made (the
 * data `npm start` keeps in .local outlives a version), as a deployment of the
 * stack adds them to its tables: DynamoDB fills a new index from the items there.
 */
async function addMissingIndexes(client: DynamoDBClient, tableName: string, definition: TableDefinition, table: TableDescription) {
  const present = new Set((table.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  const wanted = createTableInput(tableName, definition);
  for (const index of wanted.GlobalSecondaryIndexes ?? []) {
    if (present.has(index.IndexName)) continue;
    try {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: wanted.AttributeDefinitions,
          GlobalSecondaryIndexUpdates: [{ Create: index }],
        }),
      );
    } catch (error) {
      // Another `npm start` on a shared DynamoDB added it meanwhile.
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await untilIndexActive(client, tableName, index.IndexName!);
  }
}

/** DynamoDB fills a new index from the table's items before it is ACTIVE: a Query before then may miss them. */
async function untilIndexActive(client: DynamoDBClient, tableName: string, indexName: string): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const index = Table?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === indexName);
    if (index?.IndexStatus === 'ACTIVE' && !index.Backfilling) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Index ${indexName} of ${tableName} did not become ACTIVE within a minute`);
}

function createTableInput(tableName: string, definition: TableDefinition): CreateTableCommandInput {
  const attributes = new Map<string, 'S' | 'N'>();
  const keySchema = (partitionKey: { name: string; type: 'S' | 'N' }, sortKey?: { name: string; type: 'S' | 'N' }) => {
    attributes.set(partitionKey.name, partitionKey.type);
    if (sortKey) attributes.set(sortKey.name, sortKey.type);
    return [
      { AttributeName: partitionKey.name, KeyType: 'HASH' as const },
      ...(sortKey ? [{ AttributeName: sortKey.name, KeyType: 'RANGE' as const }] : []),
    ];
  };
  const input: CreateTableCommandInput = {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: keySchema(definition.partitionKey, definition.sortKey),
    AttributeDefinitions: [],
  };
  if (definition.indexes.length > 0) {
    input.GlobalSecondaryIndexes = definition.indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: keySchema(index.partitionKey, index.sortKey),
      Projection: { ProjectionType: 'ALL' },
    }));
  }
  input.AttributeDefinitions = [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
  return input;
}
