import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TableName } from '../../definitions/tables';
import type { Clock } from '../../functions/runtime/clock';
import { createDocumentClient, type Dependencies } from '../../functions/runtime/dependencies';
import { localCredentials } from '../../local/local-api';
import { ensureTables, tableNamesFor } from '../../local/tables';

export function testEndpoint(): string {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run the tests with jest (its globalSetup starts DynamoDB Local)');
  return endpoint;
}

/** Fresh tables on the shared DynamoDB Local, under a prefix of their own. */
export async function createTestTables(): Promise<Record<TableName, string>> {
  const names = tableNamesFor(`test-${randomBytes(4).toString('hex')}`);
  const admin = new DynamoDBClient({ endpoint: testEndpoint(), region: 'local', ...localCredentials() });
  await ensureTables(admin, names);
  admin.destroy();
  return names;
}

/**
 * A clock the test moves by hand. It must stay ahead of the real time: DynamoDB
 * Local's TTL sweeper runs on the real clock and would delete rate-limit
 * counters stamped in the past as expired.
 */
export class TestClock {
  constructor(public now: number = Date.parse('2029-06-01T12:00:00Z')) {}
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
