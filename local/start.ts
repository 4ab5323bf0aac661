/**
 * `npm start`: DynamoDB Local (data kept in .local/dynamodb), or the DynamoDB
 * named by AWS_ENDPOINT_URL_DYNAMODB; the tables; a development key; and the
 * local gateway at http://localhost:3000/v1 (PORT overrides the port, HOST the
 * interface). Ctrl-C stops everything, DynamoDB Local included.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createDynamoDbClient } from '../functions/runtime/dependencies';
import { ensureDevelopmentKey } from './development-key';
import { JavaMissingError, type RunningDynamoDb, startDynamoDbLocal, stopLeftoverDynamoDbs } from './dynamodb-local';
import { type LocalApi, localCredentials, startLocalApi } from './local-api';
import {
  type LocalEndpoint,
  localStateDir,
  localUsagePlansDir,
  removeLocalEndpoint,
  localTablePrefix as tablePrefix,
  writeLocalEndpoint,
} from './local-endpoint';
import { type Refusal, refusalLine } from './refusal-log';
import { ensureTables, tableNamesFor } from './tables';

// Metrics are CloudWatch EMF lines, for AWS only; locally they would drown the request log.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

/** The gateway answers this machine only unless HOST says otherwise: the development key is a Business key. */
const defaultHost = '127.0.0.1';
const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1']);

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

/** A user error (bad setting, missing Java, unreachable endpoint): its message alone, no stack trace. */
class StartError extends Error {}

function settings() {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new StartError(`PORT must be a port number, not "${process.env.PORT}"`);
  const host = process.env.HOST || defaultHost;
  const externalEndpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB || undefined;
  if (externalEndpoint && !URL.canParse(externalEndpoint)) {
    throw new StartError(`AWS_ENDPOINT_URL_DYNAMODB must be a URL such as http://127.0.0.1:8000, not "${externalEndpoint}"`);
  }
  return { port, host, externalEndpoint };
}

/**
 * The DynamoDB to use: the one AWS_ENDPOINT_URL_DYNAMODB names, else a DynamoDB
 * Local of our own. The variable is the SDKs' service-specific endpoint setting
 * ("Service-specific endpoints", https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html);
 * an endpoint passed to a client explicitly, as ours are, takes precedence over
 * it, so it is read here and handed on.
 */
async function dynamoEndpoint(externalEndpoint: string | undefined): Promise<string> {
  if (externalEndpoint) {
    console.log(`Using the DynamoDB at ${externalEndpoint} (AWS_ENDPOINT_URL_DYNAMODB)…`);
    return externalEndpoint;
  }
  console.log('Starting DynamoDB Local…');
  // A DynamoDB Local left by an `npm start` that was killed outright would hold the data folder.
  await stopLeftoverDynamoDbs(localStateDir);
  dynamo = await startDynamoDbLocal({ dataDir: join(localStateDir, 'dynamodb'), pidFile: join(localStateDir, 'dynamodb.pid') });
  return dynamo.endpoint;
}

async function createTables(dynamoUrl: string, tableNames: ReturnType<typeof tableNamesFor>): Promise<void> {
  const admin = createDynamoDbClient({
    endpoint: dynamoUrl,
    region: 'local',
    ...localCredentials(),
    budget: { maxAttempts: 2, connectionTimeoutMs: 2_000, requestTimeoutMs: 10_000 },
  });
  try {
    await ensureTables(admin, tableNames);
  } catch (error) {
    throw new StartError(
      `The DynamoDB at ${dynamoUrl} did not let us create the tables: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    admin.destroy();
  }
}

const portInUse = (port: number, host: string) =>
  new StartError(`Port ${port} is in use on ${host}: stop what runs there, or start on another port, e.g. PORT=3001 npm start`);

/**
 * Fails at once when the port is taken (most often by an `npm start` already
 * running), before a second DynamoDB Local opens the same data folder: two of
 * them on one database answer each other's locks with errors.
 */
async function checkPortFree(port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? portInUse(port, host) : error));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

async function main(): Promise<void> {
  const { port, host, externalEndpoint } = settings();
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  await checkPortFree(port, host);
  const dynamoUrl = await dynamoEndpoint(externalEndpoint);
  const tableNames = tableNamesFor(tablePrefix);
  await createTables(dynamoUrl, tableNames);

  // The operator's log: one line per refused request, with its status, code and reason (local/refusal-log.ts).
  const onRefusal = (refusal: Refusal) => console.log(refusalLine(refusal));
  api = await startLocalApi({ dynamoEndpoint: dynamoUrl, tableNames, port, host, onRefusal, usagePlansDir: localUsagePlansDir }).catch(
    (error: unknown) => {
      // A busy port is a person's to fix: one line, not Node's stack trace (taken since the check above).
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw portInUse(port, host);
      throw error;
    },
  );
  if (!loopbackHosts.has(host)) {
    console.warn(`Warning: HOST=${host}: the API answers other machines on your network too, not only this one.`);
  }
  const key = await ensureDevelopmentKey(api.dependencies, join(localStateDir, 'development-api-key'));
  // The key tool (`npx petstore-keys`) finds this DynamoDB through this file.
  endpoint = { dynamoEndpoint: dynamoUrl, tablePrefix, usagePlansDir: localUsagePlansDir };
  writeLocalEndpoint(endpoint);
  const where = host === defaultHost ? api.url : `${api.url} (listening on ${host})`;
  console.log(`
Pet Store API v1 is running at ${where}
DynamoDB: ${dynamoUrl} (${dynamo ? `DynamoDB Local, data in ${join(localStateDir, 'dynamodb')}` : 'AWS_ENDPOINT_URL_DYNAMODB'})
Development API key (Business plan): ${key}

Try:
  curl -H "Authorization: Bearer ${key}" ${api.url}/pets

Ctrl-C stops the API${dynamo ? ' and DynamoDB Local' : ''}.`);
}

main().catch(async (error: unknown) => {
  console.error(error instanceof JavaMissingError || error instanceof StartError ? error.message : error);
  await stop(1);
});
