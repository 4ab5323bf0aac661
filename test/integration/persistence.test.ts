import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { startLocalApi } from '../../local/local-api';
import { ensureTables, tableNamesFor } from '../../local/tables';
import { issueTestKey, postJson } from '../support/api';
import { beforeGetPetSunset, testDynamoDbClient } from '../support/dynamo';

/**
 * What `npm start` does on a restart: the same data folder, the tables kept, the pets still there.
 * Two DynamoDB Local starts and two API starts (each function a cold start of its bundle): more than the default minute on a busy machine.
 */
it('keeps pets and keys across a restart of DynamoDB Local and the API', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-data-'));
  const tableNames = tableNamesFor('petstore-local');
  const start = async () => {
    const dynamo = await startDynamoDbLocal({ dataDir });
    const admin = testDynamoDbClient(dynamo.endpoint);
    await ensureTables(admin, tableNames);
    admin.destroy();
    // Read back with getPet, which works only before its sunset: a clock before it, whatever today's date.
    const api = await startLocalApi({ dynamoEndpoint: dynamo.endpoint, tableNames, clock: () => beforeGetPetSunset });
    return {
      api,
      stop: async () => {
        await api.close();
        await dynamo.stop();
      },
    };
  };
  try {
    const first = await start();
    const key = await issueTestKey(first.api.dependencies, 'business');
    const auth = { Authorization: `Bearer ${key}` };
    const created = await fetch(`${first.api.url}/pets`, {
      ...postJson({ name: 'Persistent', categoryId: 9 }),
      headers: { ...auth, 'Content-Type': 'application/json' },
    });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    await first.stop();

    const second = await start();
    try {
      const read = await fetch(`${second.api.url}/pets/${pet.id}`, { headers: auth });
      expect(read.status).toBe(200);
      expect(await read.json()).toEqual(pet);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 150_000);
