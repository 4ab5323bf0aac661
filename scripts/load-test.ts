/**
 * `npm run load [-- --duration 60 --connections 20]`: a bounded load and soak
 * run against the API exactly as `npm start` serves it (the same local gateway
 * and handlers on DynamoDB Local, started here in memory so the run is
 * isolated), with mixed traffic over several keys and plans, followed by a
 * consistency check: every 201 readable, ids unique, no pet without a 201,
 * the rate-limit counters equal to the requests served, and zero 5xx.
 * Traffic goes to 127.0.0.1 only. Exits non-zero if any check fails.
 */
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import { Command } from 'commander';
import type { PlanName } from '../definitions/plans';
import type { TableName } from '../definitions/tables';
import { CustomerTable, generateApiKey } from '../functions/customers';
import { UsageCounters } from '../functions/rate-limit';
import { createDynamoDbClient } from '../functions/runtime/dependencies';
import { type RunningDynamoDb, startDynamoDbLocal } from '../local/dynamodb-local';
import { type LocalApi, localCredentials, startLocalApi } from '../local/local-api';
import { ensureTables, tableNamesFor } from '../local/tables';

process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const options = new Command()
  .description('Bounded load test of the local API, then a consistency check.')
  .option('--duration <seconds>', 'how long to send traffic', '60')
  .option('--connections <n>', 'concurrent connections', '20')
  .parse()
  .opts<{ duration: string; connections: string }>();
const durationSeconds = Number(options.duration);
const connections = Number(options.connections);

/**
 * The keys that share the traffic, round robin. Half of it goes to enterprise
 * keys with limits above the load, so most requests are served; the fixed
 * plans run into their limits (and bans) as real clients would.
 */
const keyPlans: PlanName[] = ['enterprise', 'enterprise', 'enterprise', 'business', 'pro', 'free'];
const enterpriseLimits = { perMinute: 1_000_000, perDay: 100_000_000 };

interface Served {
  keyId: string;
  operation: string;
  status: number;
  petId?: number;
}

interface IssuedKey {
  secret: string;
  keyId: string;
  /** Whose counters the key counts on (the limiter counts per customer, not per secret). */
  customerId: string;
  plan: PlanName;
}

/** What the traffic left behind, recorded as the local gateway answered. */
interface Recording {
  served: Served[];
  createdIds: number[];
}

/** A fresh in-memory DynamoDB Local with the project's tables, so the run is isolated. */
async function startIsolatedDynamoDb(): Promise<{ dynamo: RunningDynamoDb; tableNames: Record<TableName, string> }> {
  const dynamo = await startDynamoDbLocal();
  const tableNames = tableNamesFor('load');
  const admin = createDynamoDbClient({ endpoint: dynamo.endpoint, region: 'local', ...localCredentials(), budget: 'sdk-defaults' });
  await ensureTables(admin, tableNames);
  admin.destroy();
  return { dynamo, tableNames };
}

/** The local API as `npm start` serves it, recording every function response. */
async function startRecordingApi(dynamoEndpoint: string, tableNames: Record<TableName, string>, recording: Recording): Promise<LocalApi> {
  return startLocalApi({
    dynamoEndpoint,
    tableNames,
    onFunctionResponse: (event, result) => {
      const entry: Served = {
        keyId: String(event.requestContext.authorizer?.keyId),
        operation: `${event.httpMethod} ${event.resource}`,
        status: result.statusCode,
      };
      if (result.statusCode === 201) {
        entry.petId = (JSON.parse(result.body) as { id: number }).id;
        recording.createdIds.push(entry.petId);
      }
      recording.served.push(entry);
    },
  });
}

async function issueLoadKeys(api: LocalApi, tableNames: Record<TableName, string>): Promise<IssuedKey[]> {
  const keys = new CustomerTable(api.dependencies.db, tableNames);
  const issued: IssuedKey[] = [];
  for (const plan of keyPlans) {
    const customLimits = plan === 'enterprise' ? enterpriseLimits : undefined;
    const { secret, record } = generateApiKey({ plan, owner: 'load test', customLimits, now: Date.now() });
    await keys.insert(record);
    issued.push({ secret, keyId: record.keyId, customerId: record.customerId, plan });
  }
  return issued;
}

/** The mix, by request number: 40 % creates, 40 % lists (half by status), 20 % reads of created pets. */
function nextRequest(request: autocannon.Request, sent: number, key: IssuedKey, createdIds: number[]): autocannon.Request {
  const mix = sent % 10;
  const headers = { Authorization: `Bearer ${key.secret}`, 'Content-Type': 'application/json' };
  if (mix < 4)
    return {
      ...request,
      method: 'POST',
      path: '/v1/pets',
      headers,
      body: JSON.stringify({ name: `Load ${sent}`, categoryId: 1 + (sent % 7) }),
    };
  if (mix < 8)
    return { ...request, method: 'GET', path: `/v1/pets?limit=${1 + (sent % 100)}${mix % 2 ? '&status=available' : ''}`, headers };
  const id = createdIds[sent % Math.max(1, createdIds.length)] ?? 1;
  return { ...request, method: 'GET', path: `/v1/pets/${id}`, headers };
}

/** Bounded traffic: autocannon stops after the duration; keys take turns. */
function sendTraffic(apiUrl: string, issued: IssuedKey[], recording: Recording): Promise<autocannon.Result> {
  let sent = 0;
  return new Promise<autocannon.Result>((resolve, reject) => {
    const setupRequest = (request: autocannon.Request) => {
      sent++;
      return nextRequest(request, sent, issued[sent % issued.length] as IssuedKey, recording.createdIds);
    };
    const instance = autocannon(
      { url: apiUrl.replace(/\/v1$/, ''), connections, duration: durationSeconds, requests: [{ setupRequest }] },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    );
    const progress = setInterval(() => process.stdout.write(`  … ${recording.served.length} requests served\n`), 10_000);
    instance.on('done', () => clearInterval(progress));
  });
}

async function readStoredPetIds(db: DynamoDBDocumentClient, tableNames: Record<TableName, string>): Promise<number[]> {
  const stored: number[] = [];
  let exclusiveStartKey: Record<string, unknown> | undefined;
  do {
    // Every stored pet, wherever its shard: a Scan of the table (pets have ids ≥ 1; allocator items ≤ 0).
    const page = await db.send(new ScanCommand({ TableName: tableNames.pets, ExclusiveStartKey: exclusiveStartKey }));
    stored.push(...(page.Items ?? []).map((item) => Number(item.id)).filter((id) => id >= 1));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return stored;
}

/** Every 201 readable, no id twice, no stored pet without a 201. */
function checkPets(createdIds: number[], stored: number[]) {
  const storedSet = new Set(stored);
  const createdSet = new Set(createdIds);
  return {
    lost: createdIds.filter((id) => !storedSet.has(id)).length,
    withoutA201: stored.filter((id) => !createdSet.has(id)).length,
    duplicateIds: createdIds.length - createdSet.size,
  };
}

/** Per plan: the limiter's day counters must cover the requests served (answered minus 429s); the rest is leased and unused. */
async function checkCounters(db: DynamoDBDocumentClient, tableNames: Record<TableName, string>, issued: IssuedKey[], served: Served[]) {
  const days = [
    ...new Set([...UsageCounters.daysBack(Date.now() - (durationSeconds + 5) * 1000, 1), ...UsageCounters.daysBack(Date.now(), 1)]),
  ];
  const usage = new UsageCounters(db, tableNames.rateLimits);
  const rows: string[][] = [];
  let countersMatch = true;
  for (const plan of [...new Set(keyPlans)]) {
    const planKeys = issued.filter((key) => key.plan === plan);
    let answered = 0;
    let refused = 0;
    let counted = 0;
    for (const key of planKeys) {
      const mine = served.filter((entry) => entry.keyId === key.keyId);
      answered += mine.length;
      refused += mine.filter((entry) => entry.status === 429).length;
      for (const day of days) {
        counted += (await usage.day(key, day)).requests;
      }
    }
    // Leases grant ahead of use: the day's count is what was served plus what instances still hold unused.
    const match = counted >= answered - refused;
    countersMatch &&= match;
    rows.push([
      plan,
      String(planKeys.length),
      String(answered),
      String(answered - refused),
      String(refused),
      String(counted),
      match ? 'yes' : 'NO',
    ]);
  }
  return { rows, countersMatch };
}

function markdownTable(header: string[], body: string[][]): string {
  const widths = header.map((cell, index) => Math.max(cell.length, ...body.map((row) => (row[index] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, index) => cell.padEnd(widths[index] ?? 0)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

function printSummary(
  result: autocannon.Result,
  recording: Recording,
  pets: ReturnType<typeof checkPets>,
  counterRows: string[][],
): { fiveHundreds: number } {
  const { served, createdIds } = recording;
  const statusCounts = new Map<number, number>();
  for (const entry of served) statusCounts.set(entry.status, (statusCounts.get(entry.status) ?? 0) + 1);
  const fiveHundreds = served.filter((entry) => entry.status >= 500).length;
  console.log(`
## Load test summary (npm run load -- --duration ${durationSeconds} --connections ${connections})

${markdownTable(
  ['measure', 'value'],
  [
    ['requests answered', String(served.length)],
    ['throughput (req/s, mean)', result.requests.average.toFixed(0)],
    ['latency p50 / p99 (ms)', `${result.latency.p50} / ${result.latency.p99}`],
    [
      'statuses',
      [...statusCounts]
        .sort(([a], [b]) => a - b)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', '),
    ],
    ['5xx', String(fiveHundreds)],
    ['client errors / timeouts', `${result.errors} / ${result.timeouts}`],
    ['pets created (201)', String(createdIds.length)],
    ['201s not readable (lost)', String(pets.lost)],
    ['duplicate ids', String(pets.duplicateIds)],
    ['pets stored without a 201', String(pets.withoutA201)],
  ],
)}

${markdownTable(['plan', 'keys', 'answered', 'served', '429', 'granted by limiter', 'granted ≥ served'], counterRows)}
`);
  return { fiveHundreds };
}

async function main(): Promise<void> {
  const { dynamo, tableNames } = await startIsolatedDynamoDb();
  const recording: Recording = { served: [], createdIds: [] };
  const api = await startRecordingApi(dynamo.endpoint, tableNames, recording);
  const issued = await issueLoadKeys(api, tableNames);

  console.log(`Load: ${durationSeconds} s, ${connections} connections, ${issued.length} keys (${keyPlans.join(', ')}) against ${api.url}`);
  const result = await sendTraffic(api.url, issued, recording);
  // Let responses already on their way be recorded before closing.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await api.close();

  // The check reads the tables directly.
  const check = await startLocalApi({ dynamoEndpoint: dynamo.endpoint, tableNames });
  const pets = checkPets(recording.createdIds, await readStoredPetIds(check.dependencies.db, tableNames));
  const counters = await checkCounters(check.dependencies.db, tableNames, issued, recording.served);
  await check.close();
  await dynamo.stop();

  const { fiveHundreds } = printSummary(result, recording, pets, counters.rows);
  const ok =
    fiveHundreds === 0 &&
    result.errors === 0 &&
    pets.lost === 0 &&
    pets.duplicateIds === 0 &&
    pets.withoutA201 === 0 &&
    counters.countersMatch;
  console.log(ok ? 'All consistency checks passed.' : 'CONSISTENCY CHECK FAILED.');
  process.exit(ok ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
