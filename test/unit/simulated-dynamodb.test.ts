import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableName } from '../../definitions/tables';
import { itemThatFailedCondition } from '../../functions/data/conditional-check';
import { isDependencyFailure } from '../../functions/data/dynamo-errors';
import { CounterTable } from '../../functions/rate-limit';
import { windowsAt } from '../../functions/rate-limit/testing';
import { SimulatedDynamoDB, UnsupportedBySimulation } from '../support/simulated-dynamodb';

/**
 * The in-memory DynamoDB of the customer simulation answers as DynamoDB does
 * where the limiter and the key tool rely on it: a failed condition changes
 * nothing and shows the item in the way, a transaction is all or nothing, and
 * what it cannot model it refuses as a bug (500), never as a guess.
 */
const tableNames: Record<TableName, string> = { pets: 'pets', apiKeys: 'keys', rateLimits: 'counters', idempotency: 'idempotency' };

function fresh(): { store: SimulatedDynamoDB; db: ReturnType<SimulatedDynamoDB['client']> } {
  const store = new SimulatedDynamoDB(tableNames);
  return { store, db: store.client({ name: 'test', mode: 'immediate' }) };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error & Record<string, unknown>,
  );

it('a failed condition changes nothing and the error carries the item as it was, as the SDK would', async () => {
  const { store, db } = fresh();
  await db.send(new PutCommand({ TableName: 'counters', Item: { pk: 'c#1', minuteGranted: 5, leases: { a: 3 } } }));
  const error = await failure(
    db.send(
      new UpdateCommand({
        TableName: 'counters',
        Key: { pk: 'c#1' },
        UpdateExpression: 'SET minuteGranted = minuteGranted + :take, leases.#instance = :seq',
        ConditionExpression: 'minuteGranted <= :max AND (attribute_not_exists(leases.#instance) OR leases.#instance < :seq)',
        ExpressionAttributeNames: { '#instance': 'a' },
        ExpressionAttributeValues: { ':take': 1, ':max': 10, ':seq': 3 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    ),
  );
  expect(error?.name).toBe('ConditionalCheckFailedException');
  expect(isDependencyFailure(error)).toBe(false);
  expect(itemThatFailedCondition(error)).toEqual({ pk: 'c#1', minuteGranted: 5, leases: { a: 3 } });
  expect(store.item('counters', { pk: 'c#1' })).toEqual({ pk: 'c#1', minuteGranted: 5, leases: { a: 3 } });
});

it('a condition that holds applies SET with +, -, if_not_exists and a nested map path, and REMOVE, each read from the item before', async () => {
  const { store, db } = fresh();
  await db.send(new PutCommand({ TableName: 'counters', Item: { pk: 'c#1', granted: 5, spare: 2, leases: {}, old: 'x' } }));
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: 'counters',
      Key: { pk: 'c#1' },
      UpdateExpression:
        'SET granted = granted + :two, spare = granted - spare, day = if_not_exists(day, :zero) + :two, leases.#i = :seq REMOVE old',
      ConditionExpression: 'NOT attribute_exists(missing) AND granted BETWEEN :two AND :seq',
      ExpressionAttributeNames: { '#i': 'instance-1' },
      ExpressionAttributeValues: { ':two': 2, ':zero': 0, ':seq': 7 },
      ReturnValues: 'ALL_NEW',
    }),
  );
  expect(Attributes).toEqual({ pk: 'c#1', granted: 7, spare: 3, day: 2, leases: { 'instance-1': 7 } });
  expect(store.item('counters', { pk: 'c#1' })).toEqual(Attributes);
});

it('NOT binds tighter than AND, and AND tighter than OR', async () => {
  const { db } = fresh();
  await db.send(new PutCommand({ TableName: 'counters', Item: { pk: 'c#1', a: 1 } }));
  const update = (condition: string) =>
    failure(
      db.send(
        new UpdateCommand({
          TableName: 'counters',
          Key: { pk: 'c#1' },
          UpdateExpression: 'SET b = :one',
          ConditionExpression: condition,
          ExpressionAttributeValues: { ':one': 1 },
        }),
      ),
    );
  // a = 1 OR (missing AND missing): true. (a = 1 OR missing) AND missing: false.
  expect(await update('a = :one OR attribute_exists(x) AND attribute_exists(y)')).toBeUndefined();
  expect((await update('(a = :one OR attribute_exists(x)) AND attribute_exists(y)'))?.name).toBe('ConditionalCheckFailedException');
  // NOT a = 1 AND …: (NOT a = 1) AND …, false.
  expect((await update('NOT a = :one AND attribute_not_exists(x)'))?.name).toBe('ConditionalCheckFailedException');
});

it('an update of a missing item creates it from its key; arithmetic on a missing attribute or under a missing map is refused as a bug (500)', async () => {
  const { store, db } = fresh();
  await db.send(
    new UpdateCommand({
      TableName: 'counters',
      Key: { pk: 'c#2' },
      UpdateExpression: 'SET n = if_not_exists(n, :zero)',
      ExpressionAttributeValues: { ':zero': 0 },
    }),
  );
  expect(store.item('counters', { pk: 'c#2' })).toEqual({ pk: 'c#2', n: 0 });
  for (const expression of ['SET m = m + :one', 'SET leases.#i = :one']) {
    const error = await failure(
      db.send(
        new UpdateCommand({
          TableName: 'counters',
          Key: { pk: 'c#2' },
          UpdateExpression: expression,
          ...(expression.includes('#i') ? { ExpressionAttributeNames: { '#i': 'a' } } : {}),
          ExpressionAttributeValues: { ':one': 1 },
        }),
      ),
    );
    expect(error?.name).toBe('ValidationException');
    expect(isDependencyFailure(error)).toBe(false);
  }
  expect(store.item('counters', { pk: 'c#2' })).toEqual({ pk: 'c#2', n: 0 });
});

it('refuses a placeholder no expression uses, as DynamoDB does', async () => {
  const { db } = fresh();
  const error = await failure(
    db.send(
      new UpdateCommand({
        TableName: 'counters',
        Key: { pk: 'c#1' },
        UpdateExpression: 'SET a = :one',
        ExpressionAttributeValues: { ':one': 1, ':two': 2 },
      }),
    ),
  );
  expect(error?.name).toBe('ValidationException');
});

it('refuses what it does not model as a bug, never a dependency failure', async () => {
  const { db } = fresh();
  await db.send(new PutCommand({ TableName: 'counters', Item: { pk: 'c#1' } }));
  for (const input of [
    { UpdateExpression: 'ADD a :one', ExpressionAttributeValues: { ':one': 1 } },
    { UpdateExpression: 'SET a = :one', ConditionExpression: 'b <> :one', ExpressionAttributeValues: { ':one': 1 } },
    { UpdateExpression: 'SET a = :one', ConditionExpression: 'begins_with(b, :one)', ExpressionAttributeValues: { ':one': 1 } },
  ]) {
    const error = await failure(db.send(new UpdateCommand({ TableName: 'counters', Key: { pk: 'c#1' }, ...input })));
    expect(error).toBeInstanceOf(UnsupportedBySimulation);
    expect(isDependencyFailure(error)).toBe(false);
  }
});

const transaction = (condition: string, token?: string) =>
  new TransactWriteCommand({
    TransactItems: [
      {
        Update: {
          TableName: 'keys',
          Key: { keyHash: 'customer#1' },
          UpdateExpression: 'SET plan = :pro',
          ExpressionAttributeValues: { ':pro': 'pro' },
        },
      },
      {
        ConditionCheck: {
          TableName: 'keys',
          Key: { keyHash: 'h1' },
          ConditionExpression: condition,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':active': 'active' },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      {
        Update: {
          TableName: 'counters',
          Key: { pk: '1#2026-01-01' },
          UpdateExpression: 'SET customerPerMinute = :n',
          ExpressionAttributeValues: { ':n': 300 },
        },
      },
    ],
    ...(token ? { ClientRequestToken: token } : {}),
  });

it('is all or nothing: one failed condition cancels every write, with a reason per item and the item in the way', async () => {
  const { store, db } = fresh();
  await db.send(new PutCommand({ TableName: 'keys', Item: { keyHash: 'customer#1', plan: 'business' } }));
  await db.send(new PutCommand({ TableName: 'keys', Item: { keyHash: 'h1', status: 'revoked' } }));
  const error = await failure(db.send(transaction('#status = :active')));
  expect(error?.name).toBe('TransactionCanceledException');
  expect(isDependencyFailure(error)).toBe(false);
  const reasons = error?.CancellationReasons as { Code: string; Item?: unknown }[];
  expect(reasons.map((reason) => reason.Code)).toEqual(['None', 'ConditionalCheckFailed', 'None']);
  expect(reasons[1]?.Item).toEqual({ keyHash: { S: 'h1' }, status: { S: 'revoked' } });
  expect(store.item('keys', { keyHash: 'customer#1' })).toEqual({ keyHash: 'customer#1', plan: 'business' });
  expect(store.item('counters', { pk: '1#2026-01-01' })).toBeUndefined();
});

it('applies every write when every condition holds, and a repeat of its token applies nothing again', async () => {
  const { store, db } = fresh();
  await db.send(new PutCommand({ TableName: 'keys', Item: { keyHash: 'h1', status: 'active' } }));
  await db.send(transaction('#status = :active', 'token-1'));
  expect(store.item('keys', { keyHash: 'customer#1' })).toEqual({ keyHash: 'customer#1', plan: 'pro' });
  expect(store.item('counters', { pk: '1#2026-01-01' })).toEqual({ pk: '1#2026-01-01', customerPerMinute: 300 });
  await db.send(new PutCommand({ TableName: 'keys', Item: { keyHash: 'customer#1', plan: 'free' } }));
  await db.send(transaction('#status = :active', 'token-1'));
  expect(store.item('keys', { keyHash: 'customer#1' })).toEqual({ keyHash: 'customer#1', plan: 'free' });
});

it('queries the byKeyId index of the key table, projecting what is asked', async () => {
  const { db } = fresh();
  await db.send(new PutCommand({ TableName: 'keys', Item: { keyHash: 'h1', keyId: 'key_1', status: 'active' } }));
  await db.send(new PutCommand({ TableName: 'keys', Item: { keyHash: 'customer#key_1', customerId: 'key_1' } }));
  const { Items } = await db.send(
    new QueryCommand({
      TableName: 'keys',
      IndexName: 'byKeyId',
      KeyConditionExpression: 'keyId = :keyId',
      ExpressionAttributeValues: { ':keyId': 'key_1' },
      ProjectionExpression: 'keyHash',
    }),
  );
  expect(Items).toEqual([{ keyHash: 'h1' }]);
});

const windows = windowsAt(Date.parse('2026-01-01T10:00:00Z'));
const caller = { keyId: 'key_1', customerId: 'key_1' };
const lease = (seq: number) =>
  ({
    kind: 'lease',
    caller,
    windows,
    instanceId: 'a',
    nowSeconds: windows.minuteStart,
    seq,
    limits: { perMinute: 60, perDay: 1000 },
    spareCap: 6,
    minuteStart: windows.minuteStart,
    shape: 'new_minute',
    take: 1,
    spare: 0,
    releaseSpare: 0,
    dayReturn: 0,
  }) as const;

function faulty(faults: Partial<Parameters<SimulatedDynamoDB['client']>[0]['faults']>) {
  const store = new SimulatedDynamoDB(tableNames);
  const db = store.client({
    name: 'a',
    mode: 'immediate',
    faults: { throttle: 0, lostAnswer: 0, sdkRetry: 0, late: 0, ...faults },
    random: () => 0,
  });
  return { store, counters: new CounterTable(db, 'counters') };
}

it('loses the answer of a write that applied: a dependency failure (503), the write on the item', async () => {
  const { store, counters } = faulty({ lostAnswer: 1 });
  const error = await failure(counters.write(lease(1)));
  expect(error?.name).toBe('DependencyUnavailableError');
  expect(store.item('counters', { pk: `key_1#${windows.day}` })).toMatchObject({ minuteGranted: 1, leases: { a: 1 } });
});

it("answers the SDK's second attempt of a lost answer, which finds its own write and is told so", async () => {
  const { counters } = faulty({ lostAnswer: 1, sdkRetry: 1 });
  const result = await counters.write(lease(1));
  expect(result.applied).toBe(false);
  expect(result.state).toMatchObject({ minuteGranted: 1, leaseSeq: 1 });
});

it('throttles: nothing applied, a dependency failure', async () => {
  const { store, counters } = faulty({ throttle: 1 });
  expect((await failure(counters.write(lease(1))))?.name).toBe('DependencyUnavailableError');
  expect(store.item('counters', { pk: `key_1#${windows.day}` })).toBeUndefined();
});

it('lands a late write after later writes, its answer reaching no one', async () => {
  const store = new SimulatedDynamoDB(tableNames);
  let late = 1;
  const db = store.client({
    name: 'a',
    mode: 'immediate',
    faults: { throttle: 0, lostAnswer: 0, sdkRetry: 0, late: 1 },
    random: () => late,
  });
  const put = (value: number) => db.send(new PutCommand({ TableName: 'counters', Item: { pk: 'c#1', value } }));
  late = 0;
  expect((await failure(put(1)))?.name).toBe('TimeoutError');
  late = 1;
  await put(2);
  expect(store.item('counters', { pk: 'c#1' })).toEqual({ pk: 'c#1', value: 2 });
  store.applyNext(() => 0);
  expect(store.item('counters', { pk: 'c#1' })).toEqual({ pk: 'c#1', value: 1 });
  expect((await db.send(new GetCommand({ TableName: 'counters', Key: { pk: 'c#1' } }))).Item).toEqual({ pk: 'c#1', value: 1 });
});
