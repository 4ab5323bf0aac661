import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type RunningDynamoDb, startDynamoDbLocal } from '../../local/dynamodb-local';
import { type LocalApi, startLocalApi } from '../../local/local-api';
import { ensureTables, tableNamesFor } from '../../local/tables';
import { issueTestKey, postJson } from '../support/api';
import { testDynamoDbClient } from '../support/dynamo';

/**
 * When DynamoDB is unreachable or hangs, every operation answers 503 with
 * Retry-After within its time budget — no hang, no 502, no half-written pet —
 * and the API recovers by itself when DynamoDB is back.
 */
const BUDGET_MS = 5_000;
const tableNames = tableNamesFor('faults');

async function timed(request: Promise<Response>) {
  const started = Date.now();
  const response = await request;
  return { response, elapsedMs: Date.now() - started, body: (await response.json()) as { code: string; status: number } };
}

describe('DynamoDB stopped mid-run, then restarted', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-faults-'));
  let dynamo: RunningDynamoDb;
  let api: LocalApi;
  let port: number;
  let key: string;
  const auth = () => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    dynamo = await startDynamoDbLocal({ dataDir });
    port = Number(new URL(dynamo.endpoint).port);
    const admin = testDynamoDbClient(dynamo.endpoint);
    await ensureTables(admin, tableNames);
    admin.destroy();
    api = await startLocalApi({ dynamoEndpoint: dynamo.endpoint, tableNames });
    key = await issueTestKey(api.dependencies, 'business');
  });
  afterAll(async () => {
    await api.close();
    await dynamo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After on every operation while DynamoDB is down, and recovers without a restart of the API', async () => {
    const before = await fetch(`${api.url}/pets`, {
      ...postJson({ name: 'Before', categoryId: 1 }),
      headers: { ...auth(), 'Content-Type': 'application/json' },
    });
    expect(before.status).toBe(201);
    const existing = (await before.json()) as { id: number };

    await dynamo.stop();
    const requests = [
      () => fetch(`${api.url}/pets`, { headers: auth() }),
      () => fetch(`${api.url}/pets/${existing.id}`, { headers: auth() }),
      () =>
        fetch(`${api.url}/pets`, {
          ...postJson({ name: 'During', categoryId: 1 }),
          headers: { ...auth(), 'Content-Type': 'application/json' },
        }),
      () =>
        fetch(`${api.url}/pets`, {
          ...postJson({ name: 'During', categoryId: 1 }),
          headers: { ...auth(), 'Content-Type': 'application/json', 'Idempotency-Key': '"while-down"' },
        }),
    ];
    for (const request of requests) {
      const { response, elapsedMs, body } = await timed(request());
      expect(response.status).toBe(503);
      expect(body).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(elapsedMs).toBeLessThan(BUDGET_MS);
    }
    // An unknown key cannot be checked either: 503 from the gateway (AUTHORIZER_FAILURE), not a 401.
    const unchecked = await timed(fetch(`${api.url}/pets`, { headers: { Authorization: `Bearer psk_${'A'.repeat(43)}` } }));
    expect(unchecked.response.status).toBe(503);

    dynamo = await startDynamoDbLocal({ dataDir, port });
    // As a client does: retry a 503 after Retry-After (a freshly started DynamoDB Local on a busy
    // machine may miss the first calls' 1 s budget), with an Idempotency-Key so that retries make one pet.
    let after: Response | undefined;
    for (let attempt = 0; attempt < 5 && (after === undefined || after.status === 503); attempt++) {
      if (after) await new Promise((resolve) => setTimeout(resolve, Number(after?.headers.get('retry-after')) * 1000));
      after = await fetch(`${api.url}/pets`, {
        ...postJson({ name: 'After', categoryId: 1 }),
        headers: { ...auth(), 'Content-Type': 'application/json', 'Idempotency-Key': '"after-restart"' },
      });
    }
    expect(after?.status).toBe(201);

    // Nothing half-written: exactly the two pets that were answered 201.
    const { Items = [] } = await api.dependencies.db.send(new ScanCommand({ TableName: tableNames.pets }));
    const names = Items.filter((item) => Number(item.id) > 0)
      .map((item) => item.name)
      .sort();
    expect(names).toEqual(['After', 'Before']);
  });
});

describe('DynamoDB that accepts connections but never answers', () => {
  let blackhole: Server;
  const sockets = new Set<Socket>();
  let api: LocalApi;

  beforeAll(async () => {
    blackhole = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const address = blackhole.address() as { port: number };
    api = await startLocalApi({ dynamoEndpoint: `http://127.0.0.1:${address.port}`, tableNames });
  });
  afterAll(async () => {
    await api.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => blackhole.close(resolve));
  });

  it('answers 503 with Retry-After within the budget instead of hanging', async () => {
    const { response, elapsedMs, body } = await timed(
      fetch(`${api.url}/pets`, { headers: { Authorization: `Bearer psk_${'B'.repeat(43)}` } }),
    );
    expect(response.status).toBe(503);
    expect(body).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(elapsedMs).toBeLessThan(BUDGET_MS);
  });
});
