import { request as httpRequest } from 'node:http';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { localMetering, localTarget } from '../../admin/targets/local';
import { type KeyAdminTarget, nothingToChange } from '../../admin/targets/target';
import type { PlanLimits, PlanName } from '../../definitions/plans';
import { CustomerTable, generateApiKey, hashApiKey, meteringOf } from '../../functions/customers';
import type { Dependencies, DynamoDbCallBudget } from '../../functions/runtime/dependencies';
import { type LocalApi, type LocalApiOptions, startLocalApi } from '../../local/local-api';
import type { LocalUsagePlans } from '../../local/usage-plans';
import { expectResponseToMatchContract } from './contract';
import { createTestTables, relaxedCallBudget, TestClock, testEndpoint } from './dynamo';

export interface TestApi extends LocalApi {
  clock: TestClock;
  /** Issues a key straight into the keys table and returns its secret. */
  issueKey(plan?: PlanName, customLimits?: PlanLimits): Promise<string>;
  /** The key tool on this API's tables and usage plans, as `npx petstore-keys` works on npm start's. */
  keyTool(): KeyAdminTarget;
  /** fetch() against the API with a key: path is relative to /v1. */
  call(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
}

/** The local API (real HTTP, real handlers) on fresh tables, with a clock the test controls. */
export async function startTestApi(
  options: {
    clock?: TestClock;
    authorizerCacheTtlSeconds?: number;
    /** The functions' DynamoDB endpoint, e.g. a fault proxy's (tables are made on the test DynamoDB Local). */
    dynamoEndpoint?: string;
    dynamoCallBudget?: DynamoDbCallBudget;
    /** The functions' log level (they run in processes of their own: the test's logger is not theirs). */
    logLevel?: string;
    meteringPool?: LocalApiOptions['meteringPool'];
    usagePlanOf?: LocalApiOptions['usagePlanOf'];
    /** npm start's operator log (local/refusal-log.ts). */
    onRefusal?: LocalApiOptions['onRefusal'];
  } = {},
): Promise<TestApi> {
  const clock = options.clock ?? new TestClock();
  const api = await startLocalApi({
    dynamoEndpoint: options.dynamoEndpoint ?? testEndpoint(),
    tableNames: await createTestTables(),
    clock: clock.read,
    authorizerCacheTtlSeconds: options.authorizerCacheTtlSeconds,
    dynamoCallBudget: options.dynamoCallBudget ?? relaxedCallBudget,
    logLevel: options.logLevel,
    meteringPool: options.meteringPool,
    usagePlanOf: options.usagePlanOf,
    onRefusal: options.onRefusal,
  });
  let defaultKey: Promise<string> | undefined;
  const issueKey = (plan: PlanName = 'business', customLimits?: PlanLimits) =>
    issueTestKey(api.dependencies, plan, customLimits, api.usagePlans);
  return {
    ...api,
    clock,
    issueKey,
    keyTool: () => localTarget(api.dependencies.db, api.dependencies.tableNames, { usagePlans: api.usagePlans }),
    async call(path, init = {}) {
      const { key, ...rest } = init;
      // One default key, even for concurrent first calls.
      defaultKey ??= issueKey();
      const headers = new Headers(rest.headers);
      const chosen = key === undefined ? await defaultKey : key;
      if (chosen !== null && !headers.has('Authorization')) headers.set('Authorization', `Bearer ${chosen}`);
      const response = await fetch(`${api.url}${path}`, { ...rest, headers });
      // Contract test: every response must be one the OpenAPI document allows.
      await expectResponseToMatchContract(rest.method ?? 'GET', `${api.url}${path}`, response);
      return response;
    },
  };
}

/** A key straight into the keys table; with the gateway's usage plans, its own (an Enterprise customer's) as the key tool sets it. */
export async function issueTestKey(
  dependencies: Dependencies,
  plan: PlanName,
  customLimits?: PlanLimits,
  usagePlans?: LocalUsagePlans,
): Promise<string> {
  const { secret, record } = generateApiKey({ plan, owner: 'test', customLimits, now: dependencies.clock() });
  const metering = usagePlans ? await localMetering(usagePlans).enrol(meteringOf(record)) : nothingToChange;
  await new CustomerTable(dependencies.db, dependencies.tableNames).insert(record);
  await metering.finish();
  return secret;
}

export function postJson(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
}

/**
 * Marks a key revoked in the key table alone, as a revocation the authorizer
 * has not yet seen would look: no counter item is told (the key tool's revoke
 * tells both).
 */
export async function revokeInKeyTable(dependencies: Dependencies, key: string): Promise<void> {
  await dependencies.db.send(
    new UpdateCommand({
      TableName: dependencies.tableNames.apiKeys,
      Key: { keyHash: hashApiKey(key) },
      UpdateExpression: 'SET #status = :revoked',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':revoked': 'revoked' },
    }),
  );
}

/**
 * A GET with the Authorization field sent once per value, each on a line of
 * its own, as fetch cannot (its Headers join repeated values into one field
 * with ", ").
 */
export function getWithAuthorizationFields(
  url: string,
  values: string[],
): Promise<{ status: number; wwwAuthenticate?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'GET' }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          wwwAuthenticate: response.headers['www-authenticate'],
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.setHeader('Authorization', values);
    request.on('error', reject);
    request.end();
  });
}

/** How many pets the API lists, every page followed: what a refused request must leave as it was. */
export async function countPets(api: TestApi, key?: string): Promise<number> {
  let count = 0;
  let path: string | undefined = '/pets?limit=100';
  while (path) {
    const response = await api.call(path, key === undefined ? {} : { key });
    count += ((await response.json()) as unknown[]).length;
    path = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1]?.slice(api.url.length);
  }
  return count;
}
