import { createHmac } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
// The namespace import, as a careful engineer writes it: esbuild then drops the parts of zod
// the handler does not use (the named import keeps all of zod, about 443 KiB).
import * as z from 'zod';
import { petLayout } from '../../../functions/data/pet-layout';

export const MAX_ID = Number.MAX_SAFE_INTEGER;

export const petIdSchema = z
  .string()
  .regex(/^[1-9]\d{0,15}$/)
  .transform(Number)
  .refine((id) => id <= MAX_ID);

export const newPetSchema = z.strictObject({
  name: z
    .string()
    .refine((name) => name.isWellFormed(), 'must be valid Unicode text')
    .refine((name) => /[^\p{White_Space}]/u.test(name), 'must contain at least one non-whitespace character')
    .refine((name) => [...name].length <= 100, 'must be at most 100 characters')
    .refine((name) => !/\p{Cc}/u.test(name), 'must not contain control characters'),
  categoryId: z.number().int().min(1).max(MAX_ID),
  status: z.enum(['available', 'pending', 'sold']).optional(),
});

export const listQuerySchema = z.object({
  limit: z
    .string()
    .regex(/^\d{1,3}$/)
    .transform(Number)
    .pipe(z.number().min(1).max(100))
    .default(20),
  status: z.enum(['available', 'pending', 'sold']).optional(),
  cursor: z.string().optional(),
});

export type NewPet = z.infer<typeof newPetSchema>;
export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

/** The first problem zod found, in words a client can act on. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The request is invalid.';
  const field = issue.path.map(String).join('.');
  return field ? `${field} ${issue.message}` : issue.message;
}

export async function getPet(db: DynamoDBDocumentClient, tableName: string, id: number): Promise<Pet | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true }));
  return Item
    ? { id: Number(Item.id), name: String(Item.name), categoryId: Number(Item.categoryId), status: String(Item.status) }
    : undefined;
}

/**
 * One page of pets after `afterId` in id order, and whether more exist: one
 * Query on the shard of the block that holds the next id (the service's
 * byListShard and byStatusShard indexes; a page crossing blocks would need more).
 */
export async function listPets(
  db: DynamoDBDocumentClient,
  tableName: string,
  query: { afterId: number; limit: number; status?: string },
): Promise<{ pets: Pet[]; hasMore: boolean }> {
  const byStatus = query.status !== undefined;
  const shard = String(Math.floor(query.afterId / petLayout.blockSize) % petLayout.shardCount);
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: byStatus ? 'byStatusShard' : 'byListShard',
      KeyConditionExpression: byStatus ? 'statusShard = :shard AND id > :afterId' : 'listShard = :shard AND id > :afterId',
      ExpressionAttributeValues: { ':shard': byStatus ? `${query.status}#${shard}` : shard, ':afterId': query.afterId },
      Limit: query.limit + 1,
    }),
  );
  const pets = Items.slice(0, query.limit).map((item) => ({
    id: Number(item.id),
    name: String(item.name),
    categoryId: Number(item.categoryId),
    status: String(item.status),
  }));
  return { pets, hasMore: Items.length > query.limit };
}

/** The list index keys the service gives a pet (functions/data/pet-layout.ts). */
export function shardKeys(id: number, status: string): { listShard: string; statusShard: string } {
  const shard = String(Math.floor((id - 1) / petLayout.blockSize) % petLayout.shardCount);
  return { listShard: shard, statusShard: `${status}#${shard}` };
}

/** A list cursor as the service's: the last id and the status filter behind a MAC, base64url. */
const CURSOR_KEY = 'petstore-list-cursor-v1';
const cursorMac = (payload: string) => createHmac('sha256', CURSOR_KEY).update(payload).digest().subarray(0, 12);

export function encodeCursor(afterId: number, status: string | undefined): string {
  const payload = `1:${afterId}:${status ?? ''}`;
  return Buffer.concat([cursorMac(payload), Buffer.from(payload)]).toString('base64url');
}

/** The id after which the page starts, or undefined when the cursor is not one of ours for this filter. */
export function decodeCursor(cursor: string, status: string | undefined): number | undefined {
  const raw = Buffer.from(cursor, 'base64url');
  if (raw.length <= 12 || raw.toString('base64url') !== cursor) return undefined;
  const payload = raw.subarray(12).toString();
  if (!cursorMac(payload).equals(raw.subarray(0, 12))) return undefined;
  const match = /^1:([1-9]\d{0,15}):([a-z]*)$/.exec(payload);
  return match && (match[2] || undefined) === status ? Number(match[1]) : undefined;
}

export async function insertPet(db: DynamoDBDocumentClient, tableName: string, pet: Pet): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: tableName,
      Item: { ...pet, ...shardKeys(pet.id, pet.status), createdAt: new Date().toISOString() },
      ConditionExpression: 'attribute_not_exists(id)',
    }),
  );
}

/** Ids reserved 100 at a time on the allocator item (id 0), so a create costs 1/100 of an allocator write. */
export function idBlocks(db: DynamoDBDocumentClient, tableName: string, blockSize = 100): () => Promise<number> {
  let next = 0;
  let end = 0;
  let pending: Promise<void> | undefined;
  const refill = async () => {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { id: 0 },
        UpdateExpression: 'ADD lastReservedId :count',
        ExpressionAttributeValues: { ':count': blockSize },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    end = Number(Attributes?.lastReservedId) + 1;
    next = end - blockSize;
  };
  return async () => {
    while (next >= end) {
      pending ??= refill().finally(() => {
        pending = undefined;
      });
      await pending;
    }
    return next++;
  };
}

/** The Deprecation, Sunset and successor Link headers of GET one pet (the same contract as the service). */
export const DEPRECATED_AT_SECONDS = Date.parse('2026-01-01T00:00:00Z') / 1000;
export const SUNSET_AT_MS = Date.parse('2030-12-05T00:00:00Z');

export function deprecationHeaders(stageUrl: string): Record<string, string> {
  return {
    Deprecation: `@${DEPRECATED_AT_SECONDS}`,
    Sunset: new Date(SUNSET_AT_MS).toUTCString(),
    Link: `<${stageUrl}/pets>; rel="successor-version"`,
  };
}
