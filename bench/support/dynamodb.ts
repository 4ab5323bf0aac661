import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { TableName } from '../../definitions/tables';
import { blockOf, frontierCopyId, petLayout } from '../../functions/data/pet-layout';
import { createDynamoDbClient } from '../../functions/runtime/dependencies';
import { ensureTables, tableNamesFor } from '../../local/tables';
import { shardKeys } from '../baselines/common/pets';

/** DynamoDB Local takes any credentials; the region only has to exist. */
export const benchRegion = 'us-east-1';
export const dummyCredentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };

export function adminClient(endpoint: string): DynamoDBDocumentClient {
  const client = new DynamoDBClient({ endpoint, region: benchRegion, credentials: dummyCredentials, maxAttempts: 10 });
  return DynamoDBDocumentClient.from(client);
}

/** The service's tables (definitions/tables.ts) under a prefix of their own, as the CDK stack would make them. */
export async function createTables(endpoint: string, prefix: string): Promise<Record<TableName, string>> {
  const names = tableNamesFor(prefix);
  const client = createDynamoDbClient({ endpoint, region: benchRegion, credentials: dummyCredentials, budget: 'sdk-defaults' });
  await ensureTables(client, names);
  client.destroy();
  return names;
}

const statuses = ['available', 'pending', 'sold'] as const;

/** A stored pet as the service writes it (pet-repository: its block's shard keys for the two list indexes). */
export function petItem(id: number): Record<string, unknown> {
  return {
    id,
    ...shardKeys(id, statuses[id % 3] as string),
    name: `Pet ${id}`,
    categoryId: 1 + (id % 7),
    status: statuses[id % 3],
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

/**
 * Writes pets 1..count with BatchWriteItem (25 per request, `concurrency`
 * requests in flight, unprocessed items retried) and sets the id allocator
 * above them, so that creates never collide with loaded pets.
 */
export async function loadPets(
  db: DynamoDBDocumentClient,
  tableName: string,
  count: number,
  options: { concurrency?: number; onProgress?: (written: number) => void } = {},
): Promise<void> {
  let nextId = 1;
  let written = 0;
  const worker = async () => {
    while (nextId <= count) {
      const first = nextId;
      const last = Math.min(count, first + 24);
      nextId = last + 1;
      let requests = Array.from({ length: last - first + 1 }, (_, index) => ({ PutRequest: { Item: petItem(first + index) } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt > 20) throw new Error('BatchWriteItem kept leaving items unprocessed');
        const { UnprocessedItems } = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
        requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
      }
      written += last - first + 1;
      options.onProgress?.(written);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  // The block counter and its copies say the loaded pets' blocks exist (functions/data/block-counter.ts): our creates
  // come after them. The baselines' own allocator (id 0) starts far above, so that their creates never meet ours.
  const top = blockOf(count, petLayout);
  // Copy 0 is the counter itself (functions/data/pet-layout.ts).
  for (const id of Array.from({ length: petLayout.frontierCopies }, (_, copy) => frontierCopyId(copy))) {
    await db.send(new PutCommand({ TableName: tableName, Item: { id, top } }));
  }
  await db.send(new PutCommand({ TableName: tableName, Item: { id: 0, lastReservedId: BASELINE_IDS_FROM + count } }));
}

/** Where the baselines' allocator starts on a loaded table: above any id our creates reach in a bench run. */
const BASELINE_IDS_FROM = 1_000_000_000;
