import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Counts the requests a handler sends to DynamoDB, by operation and table,
 * from the commands given to `send` (the operation name comes from the SDK's
 * operation schema, which survives minification; the input's shape otherwise).
 */
export class RequestCounter {
  readonly counts = new Map<string, number>();

  constructor(private readonly tableLabels: Record<string, string>) {}

  record(command: unknown): { operation: string; table: string; input: Record<string, unknown> } {
    const input = ((command as { input?: unknown }).input ?? {}) as Record<string, unknown>;
    const operation = operationOf(command, input);
    const physical = String(input.TableName ?? Object.keys((input.RequestItems as object) ?? {})[0] ?? '?');
    const table = this.tableLabels[physical] ?? physical;

    const key = `${operation} ${table}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    return { operation, table, input };
  }

  reset(): void {
    this.counts.clear();
  }

  total(): number {
    return [...this.counts.values()].reduce((sum, count) => sum + count, 0);
  }
}

function operationOf(command: unknown, input: Record<string, unknown>): string {
  const schema = (command as { clientCommand?: { schema?: unknown } }).clientCommand?.schema;
  if (Array.isArray(schema) && typeof schema[2] === 'string') return schema[2];
  if ('KeyConditionExpression' in input) return 'Query';
  if ('UpdateExpression' in input) return 'UpdateItem';
  if ('RequestItems' in input)
    return Object.values(input.RequestItems as Record<string, { Keys?: unknown }>).some((request) => request.Keys)
      ? 'BatchGetItem'
      : 'BatchWriteItem';
  if ('Item' in input) return 'PutItem';
  return 'GetItem';
}

type Send = (command: unknown) => Promise<unknown>;

/** Wraps a real client's `send` so that every request is counted on its way. */
export function countingClient(db: DynamoDBDocumentClient, counter: RequestCounter): DynamoDBDocumentClient {
  const send = db.send.bind(db) as Send;
  (db as unknown as { send: Send }).send = (command) => {
    counter.record(command);
    return send(command);
  };
  return db;
}

/**
 * Replaces a client's `send` with canned answers per command type, so that a
 * handler runs without any I/O and its own overhead can be measured: GetItem
 * finds the pet, PutItem succeeds, Query returns a full page, UpdateItem
 * reserves an id block (pets table) or counts a request (rate-limit table).
 */
export function stubClient(db: DynamoDBDocumentClient, counter: RequestCounter, tables: { pets: string }): DynamoDBDocumentClient {
  const metadata = { httpStatusCode: 200, requestId: 'STUB', attempts: 1, totalRetryDelay: 0 };
  let lastReservedId = 1_000_000;
  let counterTop = 10_000;
  let granted = 0;
  /** The pets table's allocator writes: the block counter (functions/data/block-counter.ts), its copies, or the baselines' allocator. */
  const allocatorAnswer = (expression: string, values: Record<string, unknown>): Record<string, unknown> => {
    if (expression.startsWith('SET #top = if_not_exists')) return { top: ++counterTop };
    if (values[':top'] !== undefined) return {};
    lastReservedId += Number(values[':count']);
    return { lastReservedId };
  };
  const send: Send = async (command) => {
    const { operation, input } = counter.record(command);
    switch (operation) {
      case 'GetItem': {
        // The limiter's read of a key's counter item: a key with nothing counted today yet.
        if (input.TableName !== tables.pets) return { $metadata: metadata };
        const id = Number((input.Key as { id?: unknown } | undefined)?.id);
        // A copy of the block counter (functions/data/block-counter.ts): many blocks exist.
        if (id < 0) return { $metadata: metadata, Item: { id, top: counterTop } };
        return {
          $metadata: metadata,
          Item: { id, listKey: 'pets', name: `Pet ${id}`, categoryId: 3, status: 'available', createdAt: '2026-01-01T00:00:00.000Z' },
        };
      }
      case 'PutItem':
        return { $metadata: metadata };
      case 'Query': {
        const limit = Number(input.Limit ?? 21);
        const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
        const afterId = values[':from'] !== undefined ? Number(values[':from']) - 1 : Number(values[':afterId'] ?? 0);
        const Items = Array.from({ length: limit }, (_, index) => ({
          id: afterId + index + 1,
          listKey: 'pets',
          name: `Pet ${afterId + index + 1}`,
          categoryId: 3,
          status: 'available',
          createdAt: '2026-01-01T00:00:00.000Z',
        }));
        return {
          $metadata: metadata,
          Items,
          Count: Items.length,
          ScannedCount: Items.length,
          LastEvaluatedKey: { id: afterId + limit, listKey: 'pets' },
        };
      }
      case 'UpdateItem': {
        const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
        if (input.TableName === tables.pets)
          return { $metadata: metadata, Attributes: allocatorAnswer(String(input.UpdateExpression), values) };
        // A lease on the key's counter item (functions/rate-limit/counter-table.ts): the item as it stands after it.
        granted += Number(values[':take'] ?? 1);
        const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
        return {
          $metadata: metadata,
          Attributes: {
            pk: (input.Key as { pk?: unknown }).pk,
            minuteStart: values[':minute'],
            // Ours (functions/rate-limit/counter-table.ts) and the baselines' (bench/baselines/common/rate-limit.ts) names.
            minuteGranted: granted,
            dayGranted: granted,
            minuteCount: granted,
            dayCount: granted,
            spare: Number(values[':spare'] ?? values[':spareDelta'] ?? 0),
            leases: { [names['#instance'] ?? 'instance']: values[':seq'] },
            lastServedAt: values[':now'],
          },
        };
      }
      default:
        throw new Error(`The stub has no answer for ${operation}`);
    }
  };
  (db as unknown as { send: Send }).send = send;
  return db;
}
