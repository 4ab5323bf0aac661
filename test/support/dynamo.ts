import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { routes } from '../../definitions/routes';
import type { TableName } from '../../definitions/tables';
import type { Clock } from '../../functions/runtime/clock';
import { createDocumentClient, createDynamoDbClient, type Dependencies } from '../../functions/runtime/dependencies';
import { localCredentials } from '../../local/local-api';
import { ensureTables, tableNamesFor } from '../../local/tables';

export function testEndpoint(): string {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run the tests with jest (its globalSetup starts DynamoDB Local)');
  return endpoint;
}

/**
 * A plain client of a DynamoDB Local (the shared one unless told), with the
 * SDK's own retries and no timeouts: for creating tables and for a test's own
 * checks, which must not fail where the client under test has a budget.
 */
export function testDynamoDbClient(endpoint: string = testEndpoint()): DynamoDBClient {
  return createDynamoDbClient({ endpoint, region: 'local', ...localCredentials(), budget: 'sdk-defaults' });
}

/** The same as a document client: for a test's setup and checks beside the client under test. */
export function testDocumentClient(endpoint: string = testEndpoint()): DynamoDBDocumentClient {
  return createDocumentClient({ endpoint, region: 'local', ...localCredentials(), budget: 'sdk-defaults' });
}

/** Fresh tables on the shared DynamoDB Local, under a prefix of their own. */
export async function createTestTables(): Promise<Record<TableName, string>> {
  const names = tableNamesFor(`test-${randomBytes(4).toString('hex')}`);
  const admin = testDynamoDbClient();
  // TTL off: a test may stamp items at any instant (getPet's tests stand before its
  // sunset, whatever today's date), and DynamoDB Local's sweeper would delete by the real clock.
  await ensureTables(admin, names, { timeToLive: false });
  admin.destroy();
  return names;
}

const DAY_MS = 86_400_000;
/**
 * 00:00 UTC of the next UTC day, read from the real clock once per test file.
 * TTL deletes an item once its TTL attribute is less than the current time
 * (UpdateTimeToLive, https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html),
 * and DynamoDB Local's sweeper reads the real clock: rate-limit counters expire
 * 35 days after their day, so instants tests stamp on counters must lie ahead
 * of the real time. They are counted from here.
 */
const firstTestDayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;

/** The UTC date (YYYY-MM-DD) `offset` days after the first test day: tomorrow by the real clock, then on. */
export function testDay(offset = 0): string {
  return new Date(firstTestDayStart + offset * DAY_MS).toISOString().slice(0, 10);
}

/** An ISO instant on test day `offset`, e.g. testInstant(0, '10:00:05') → tomorrow at 10:00:05 UTC. */
export function testInstant(offset: number, time: string): string {
  return `${testDay(offset)}T${time}Z`;
}

export const getPetSunset = Date.parse(routes.find((route) => route.operationId === 'getPet')?.deprecation?.sunsetAt ?? '');
/**
 * Noon the day before getPet's sunset: for tests of the deprecated operation
 * while it still works, whatever today's date. Once the real date is past it,
 * counters stamped then may be swept by TTL at any moment, so tests run at this
 * instant must not count on rate-limit counts.
 */
export const beforeGetPetSunset = getPetSunset - DAY_MS / 2;

/** Runs `body` with `clock` at `instant`, then puts the clock back where it was. */
export async function atInstant<T>(clock: TestClock, instant: number, body: () => Promise<T>): Promise<T> {
  const saved = clock.now;
  clock.now = instant;
  try {
    return await body();
  } finally {
    clock.now = saved;
  }
}

/** A clock the test moves by hand; it starts at noon of the first test day (see firstTestDayStart). */
export class TestClock {
  constructor(public now: number = Date.parse(testInstant(0, '12:00:00'))) {}
  readonly read: Clock = () => this.now;
  set(iso: string): void {
    this.now = Date.parse(iso);
  }
  advance(ms: number): void {
    this.now += ms;
  }
}

/**
 * The DynamoDB call budget of tests that are not about time budgets: on a
 * loaded two-core machine DynamoDB Local can take over a second to answer, and
 * a request abandoned by the client may still have been applied, which would
 * blur exact counts. The fault tests use the deployed budget.
 */
export const relaxedCallBudget = { connectionTimeoutMs: 5_000, requestTimeoutMs: 15_000, maxAttempts: 2 };

export function testDependencies(tableNames: Record<TableName, string>, clock: Clock = () => Date.now()): Dependencies {
  return {
    db: createDocumentClient({ endpoint: testEndpoint(), region: 'local', budget: relaxedCallBudget, ...localCredentials() }),
    tableNames,
    clock,
  };
}

/**
 * The same tables and clock, with a client that signs as the Lambda function
 * `name` (an operationId, or `authorizer`), as the local runtime's function
 * processes do: the IAM policy simulator in front of the tests' DynamoDB Local
 * then holds its calls to that function's grants (test/support/iam-policy-proxy.ts).
 * For tests that run a handler in their own process.
 */
export function asFunction(name: string, dependencies: Dependencies): Dependencies {
  const credentials = { accessKeyId: name, secretAccessKey: 'local' };
  return {
    ...dependencies,
    db: createDocumentClient({ endpoint: testEndpoint(), region: 'local', budget: relaxedCallBudget, credentials }),
  };
}
