import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { tables } from '../../definitions/tables';
import type { PetStatus } from '../../functions/domain/pet';
import { type LocalApi, startLocalApi } from '../../local/local-api';
import { issueTestKey, postJson } from '../support/api';
import { createTestTables, relaxedCallBudget, TestClock, testEndpoint } from '../support/dynamo';

/**
 * 2,000 pets created through the API by 8 independent instances of the whole
 * API at once (each its own handlers, id allocator, caches and SDK client, as 8
 * Lambda environments would be), on one set of tables; then walked page by page
 * over HTTP, each page asked of the next instance in turn, with limits 1, 7, 20
 * and 100, with and without a status filter: every pet exactly once, ascending.
 * And no index of the pets table holds more than 1/8 of its items under one key.
 */
const INSTANCES = 8;
const PETS = 2_000;
const statuses: PetStatus[] = ['available', 'available', 'pending', 'sold'];
let apis: LocalApi[];
let key: string;
const created: { id: number; status: PetStatus }[] = [];

beforeAll(async () => {
  const tableNames = await createTestTables();
  const clock = new TestClock();
  apis = await Promise.all(
    Array.from({ length: INSTANCES }, () =>
      startLocalApi({ dynamoEndpoint: testEndpoint(), tableNames, clock: clock.read, dynamoCallBudget: relaxedCallBudget }),
    ),
  );
  key = await issueTestKey(apis[0]!.dependencies, 'enterprise', { perMinute: 1_000_000, perDay: 10_000_000 });
  await Promise.all(
    apis.map(async (api, instance) => {
      for (let i = instance; i < PETS; i += INSTANCES) {
        const status = statuses[i % statuses.length] as PetStatus;
        const response = await call(api, '/pets', postJson({ name: `Pet ${i}`, categoryId: 1, status }));
        expect(response.status).toBe(201);
        created.push({ id: ((await response.json()) as { id: number }).id, status });
      }
    }),
  );
}, 300_000);
afterAll(async () => {
  await Promise.all(apis.map((api) => api.close()));
});

function call(api: LocalApi, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${api.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), Authorization: `Bearer ${key}` } });
}

async function walk(limit: number, status: PetStatus | undefined): Promise<number[]> {
  const ids: number[] = [];
  let next: string | undefined = `/pets?limit=${limit}${status ? `&status=${status}` : ''}`;
  for (let page = 0; next; page++) {
    const response: Response = await call(apis[page % INSTANCES] as LocalApi, next);
    expect(response.status).toBe(200);
    ids.push(...((await response.json()) as { id: number }[]).map((pet) => pet.id));
    const cursor = response.headers.get('X-Next-Cursor');
    next = cursor ? `/pets?limit=${limit}${status ? `&status=${status}` : ''}&cursor=${cursor}` : undefined;
  }
  return ids;
}

describe.each([1, 7, 20, 100])('a walk with limit %i', (limit) => {
  it.each([undefined, 'sold'] as const)(
    'sees every pet (status %s) exactly once, in ascending order',
    async (status) => {
      const expected = created
        .filter((pet) => status === undefined || pet.status === status)
        .map((pet) => pet.id)
        .sort((a, b) => a - b);
      expect(await walk(limit, status)).toEqual(expected);
    },
    120_000,
  );
});

it('leaves no index of the pets table with more than 1/8 of its items under one partition-key value', async () => {
  const db = apis[0]!.dependencies.db;
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: apis[0]!.dependencies.tableNames.pets, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  expect(items.filter((item) => Number(item.id) >= 1)).toHaveLength(PETS);
  for (const index of tables.pets.indexes) {
    const counts = new Map<unknown, number>();
    const indexed = items.filter((item) => item[index.partitionKey.name] !== undefined && item[index.sortKey.name] !== undefined);
    for (const item of indexed) counts.set(item[index.partitionKey.name], (counts.get(item[index.partitionKey.name]) ?? 0) + 1);
    expect({ index: index.name, items: indexed.length }).toEqual({ index: index.name, items: PETS });
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(indexed.length / 8);
  }
});
