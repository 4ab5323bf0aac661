/**
 * `npx tsx scripts/migrate-list-shards.ts --table <pets table> [--region r] [--endpoint url]
 * [--state file] [--batch n]`: moves a deployed pets table from the single-key list indexes
 * (byList, byStatus) to the write-sharded ones (byListShard, byStatusShard); the steps around it
 * are in docs/operators.md.
 *
 * 1. Seeds the allocator stripes above the old allocator (id 0), with a margin for the ids the
 *    old code still hands out until the new code serves every request, so ids never collide.
 * 2. Backfills `listShard` and `statusShard` on every pet that lacks them (a parallel-safe,
 *    conditional UpdateItem per pet: a pet the new code already wrote is left alone), printing
 *    progress and saving the Scan position in the state file after each page, so that a run
 *    stopped for any reason resumes where it was.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { type DynamoDBDocumentClient, GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { blockOf, LEGACY_ALLOCATOR_ID, type PetLayout, petLayout, shardKey, stripeItemId } from '../functions/data/pet-layout';
import type { PetStatus } from '../functions/domain/pet';
import { createDocumentClient } from '../functions/runtime/dependencies';

/** Ids the old code may still hand out after the stripes are seeded (its instances keep running during the rollout). */
export const LEGACY_ID_MARGIN = 1_000_000;

export interface MigrationState {
  seeded: boolean;
  /** The Scan position after the last page done; absent before the first page and after the last. */
  lastKey?: Record<string, unknown>;
  scanned: number;
  updated: number;
  done: boolean;
}

export interface MigrationOptions {
  db: DynamoDBDocumentClient;
  table: string;
  layout?: PetLayout;
  state: MigrationState;
  /** Called after each page with the state to save. */
  save(state: MigrationState): void;
  /** Items per Scan page. */
  pageSize?: number;
  /** Stop after this many pages (tests use it to stop a run midway). */
  maxPages?: number;
  log?: (line: string) => void;
}

/** Runs (or resumes) the migration; returns the state at the end. */
export async function migrateListShards(options: MigrationOptions): Promise<MigrationState> {
  const { db, table, state } = options;
  const layout = options.layout ?? petLayout;
  const log = options.log ?? (() => {});
  if (!state.seeded) {
    const { Item } = await db.send(new GetCommand({ TableName: table, Key: { id: LEGACY_ALLOCATOR_ID }, ConsistentRead: true }));
    const legacyLast = Number(Item?.lastReservedId ?? 0);
    // Stripe s's k-th block is (k − 1)·S + s: start every stripe past the old ids and the margin.
    const firstBlock = blockOf(legacyLast + LEGACY_ID_MARGIN, layout) + 1;
    const base = Math.ceil(firstBlock / layout.stripeCount);
    for (let stripe = 0; stripe < layout.stripeCount; stripe++) {
      await db.send(
        new UpdateCommand({
          TableName: table,
          Key: { id: stripeItemId(stripe) },
          // Never moves a stripe back: a stripe already in use keeps its count.
          UpdateExpression: 'SET reserved = if_not_exists(reserved, :base), #base = if_not_exists(#base, :base)',
          // BASE is one of DynamoDB's reserved words.
          ExpressionAttributeNames: { '#base': 'base' },
          ExpressionAttributeValues: { ':base': base },
        }),
      );
    }
    state.seeded = true;
    options.save(state);
    log(
      `stripes seeded: new ids start above ${(base * layout.stripeCount * layout.blockSize).toLocaleString('en-US')} (old allocator at ${legacyLast.toLocaleString('en-US')})`,
    );
  }
  let pages = 0;
  while (!state.done && (options.maxPages === undefined || pages < options.maxPages)) {
    const page = await db.send(
      new ScanCommand({ TableName: table, ExclusiveStartKey: state.lastKey, Limit: options.pageSize ?? 500, ConsistentRead: true }),
    );
    for (const item of page.Items ?? []) {
      const id = Number(item.id);
      state.scanned++;
      if (id < 1 || item.listShard !== undefined) continue;
      const block = blockOf(id, layout);
      try {
        await db.send(
          new UpdateCommand({
            TableName: table,
            Key: { id },
            UpdateExpression: 'SET listShard = :list, statusShard = :status',
            ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(listShard)',
            ExpressionAttributeValues: {
              ':list': shardKey(block, undefined, layout),
              ':status': shardKey(block, item.status as PetStatus, layout),
            },
          }),
        );
        state.updated++;
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      }
    }
    state.lastKey = page.LastEvaluatedKey;
    state.done = page.LastEvaluatedKey === undefined;
    pages++;
    options.save(state);
    log(
      `scanned ${state.scanned.toLocaleString('en-US')} items, backfilled ${state.updated.toLocaleString('en-US')} pets${state.done ? ': done' : ''}`,
    );
  }
  return state;
}

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

async function main(): Promise<void> {
  const table = argument('table');
  if (!table) throw new Error('--table <pets table name> is required');
  const stateFile = argument('state') ?? `migrate-list-shards.${table}.json`;
  let state: MigrationState = { seeded: false, scanned: 0, updated: 0, done: false };
  try {
    state = JSON.parse(readFileSync(stateFile, 'utf8')) as MigrationState;
    console.log(`resuming from ${stateFile}: ${state.scanned} items scanned so far`);
  } catch {
    // No state yet: a first run.
  }
  const db = createDocumentClient({ region: argument('region'), endpoint: argument('endpoint'), budget: 'sdk-defaults' });
  await migrateListShards({
    db,
    table,
    state,
    save: (s) => writeFileSync(stateFile, JSON.stringify(s)),
    pageSize: Number(argument('batch') ?? 500),
    log: (line) => console.log(line),
  });
  db.destroy();
}

if (require.main === module) void main();
