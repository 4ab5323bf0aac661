import type { PetStatus } from '../../functions/domain/pet';
import { type LocalApi, startLocalApi } from '../../local/local-api';
import { issueTestKey, postJson } from '../support/api';
import { createTestTables, relaxedCallBudget, TestClock, testEndpoint } from '../support/dynamo';

/**
 * docs/clients.md: "a pet is in every walk begun after its create answered"
 * (the issue asked for a second after; the test waits that long). Over HTTP on the local gateway, each create on a createPet process
 * started for it (as Lambda moves a create to a new execution environment: a
 * fresh id block each time), while one listPets process stays warm and keeps
 * its views of the newest pets; a second on the service's clock after each
 * 201, a walk of all pets and a walk of the pet's status both list it, and so
 * does polling as the docs describe (the first page of a short list asked again).
 */
const CREATES = 12;
const statuses: PetStatus[] = ['available', 'pending', 'sold'];
let api: LocalApi;
let key: string;
const clock = new TestClock();

beforeAll(async () => {
  const tableNames = await createTestTables();
  api = await startLocalApi({ dynamoEndpoint: testEndpoint(), tableNames, clock: clock.read, dynamoCallBudget: relaxedCallBudget });
  key = await issueTestKey(api.dependencies, 'enterprise', { perMinute: 1_000_000, perDay: 10_000_000 });
}, 120_000);
afterAll(async () => {
  await api.close();
});

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${api.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), Authorization: `Bearer ${key}` } });
}

async function walk(limit: number, status: PetStatus | undefined): Promise<number[]> {
  const ids: number[] = [];
  const query = `limit=${limit}${status ? `&status=${status}` : ''}`;
  let next: string | undefined = `/pets?${query}`;
  while (next) {
    const response: Response = await call(next);
    expect(response.status).toBe(200);
    ids.push(...((await response.json()) as { id: number }[]).map((pet) => pet.id));
    const cursor = response.headers.get('X-Next-Cursor');
    next = cursor ? `/pets?${query}&cursor=${cursor}` : undefined;
  }
  return ids;
}

async function createOnFreshInstance(status: PetStatus): Promise<number> {
  await api.functions.createPet!.recycle();
  const response = await call('/pets', postJson({ name: 'Fresh', categoryId: 1, status }));
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: number }).id;
}

it('lists every pet in each walk begun a second after its create answered, with create instances replaced between creates', async () => {
  const created: number[] = [];
  const missed: string[] = [];
  for (let i = 0; i < CREATES; i++) {
    const status = statuses[i % statuses.length] as PetStatus;
    // The list instance walks first, so that it holds views of the newest pets taken before the create.
    await walk(100, undefined);
    await walk(100, status);
    const id = await createOnFreshInstance(status);
    created.push(id);
    clock.advance(1_000);
    if (!(await walk(100, undefined)).includes(id)) missed.push(`${id} in the walk of all pets`);
    if (!(await walk(7, status)).includes(id)) missed.push(`${id} in the walk of ${status} pets`);
    // Polling a short list: its first page asked again.
    const polled = (await (await call(`/pets?limit=100&status=${status}`)).json()) as { id: number }[];
    if (!polled.some((pet) => pet.id === id)) missed.push(`${id} in the polled first page of ${status} pets`);
  }
  expect(missed).toEqual([]);
  // Each create took a block of its own.
  expect(new Set(created).size).toBe(CREATES);
  const sorted = (await walk(20, undefined)).filter((id) => created.includes(id));
  expect(sorted).toEqual([...created].sort((a, b) => a - b));
}, 240_000);
