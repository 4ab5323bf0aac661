/**
 * `npm start`: DynamoDB Local (data kept in .local/dynamodb), the tables, a
 * development key, and the local gateway at http://localhost:3000/v1 (PORT
 * overrides the port). Ctrl-C stops everything, DynamoDB Local included.
 */
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type LocalEndpoint, removeLocalEndpoint, writeLocalEndpoint } from './local-endpoint';
import { JavaMissingError, type RunningDynamoDb, startDynamoDbLocal } from './dynamodb-local';
import { ensureDevelopmentKey } from './development-key';
import { type LocalApi, localCredentials, startLocalApi } from './local-api';
import { ensureTables, tableNamesFor } from './tables';

const localDir = join(__dirname, '..', '.local');
// The functions run on Node.js 22 in Lambda; the SDK's notice about this
// machine's Node.js 20 says nothing about them.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Metrics are CloudWatch EMF lines, for AWS only; locally they would drown the request log.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const tablePrefix = 'petstore-local';

let dynamo: RunningDynamoDb | undefined;
let api: LocalApi | undefined;
let endpoint: LocalEndpoint | undefined;
let stopping = false;

async function stop(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (endpoint) removeLocalEndpoint(endpoint);
  await api?.close();
  await dynamo?.stop();
  process.exit(exitCode);
}

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`PORT must be a port number, not "${process.env.PORT}"`);
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  console.log('Starting DynamoDB Local…');
  dynamo = await startDynamoDbLocal({ dataDir: join(localDir, 'dynamodb') });
  const tableNames = tableNamesFor(tablePrefix);
  const admin = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'local', ...localCredentials() });
  await ensureTables(admin, tableNames);
  admin.destroy();

  api = await startLocalApi({ dynamoEndpoint: dynamo.endpoint, tableNames, port, host: '0.0.0.0' });
  const key = await ensureDevelopmentKey(api.dependencies, join(localDir, 'development-api-key'));
  // The key tool (`npx petstore-keys`) finds this DynamoDB Local through this file.
  endpoint = { dynamoEndpoint: dynamo.endpoint, tablePrefix };
  writeLocalEndpoint(endpoint);
  console.log(`
Pet Store API v1 is running at ${api.url}
DynamoDB Local: ${dynamo.endpoint} (data in .local/dynamodb)
Development API key (Business plan): ${key}

Try:
  curl -H "Authorization: Bearer ${key}" ${api.url}/pets

Ctrl-C stops the API and DynamoDB Local.`);
}

main().catch(async (error: unknown) => {
  console.error(error instanceof JavaMissingError ? error.message : error);
  await stop(1);
});
