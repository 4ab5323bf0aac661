import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { localCredentials } from '../../local/local-api';
import { createTestTables, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy, type FaultKind, type LandedFaultKind } from '../support/dynamodb-fault-proxy';

/**
 * The proxy itself, seen by the AWS SDK with one attempt and a 500 ms request
 * timeout: each fault fails the call as real DynamoDB or a real network would,
 * and the write reaches DynamoDB exactly when the fault says so.
 */
let proxy: DynamoDbFaultProxy;
let table: string;
let direct: DynamoDBDocumentClient;
let viaProxy: DynamoDBDocumentClient;

beforeAll(async () => {
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
  table = (await createTestTables()).idempotency;
  direct = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: testEndpoint(), region: 'local', ...localCredentials() }));
  viaProxy = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: proxy.endpoint,
      region: 'local',
      ...localCredentials(),
      maxAttempts: 1,
      requestHandler: { requestTimeout: 500, throwOnRequestTimeout: true },
    }),
  );
});
afterAll(async () => {
  viaProxy.destroy();
  direct.destroy();
  await proxy.close();
});
afterEach(() => proxy.clear());

const cases: [FaultKind | LandedFaultKind, { lands: boolean; error: RegExp; status?: number }][] = [
  ['late', { lands: true, error: /TimeoutError|timed? ?out/i }],
  ['drop', { lands: true, error: /ECONNRESET|socket hang up|aborted/i }],
  ['reset', { lands: false, error: /ECONNRESET|socket hang up|aborted/i }],
  ['http500', { lands: false, error: /^InternalServerError /, status: 500 }],
  ['throughput', { lands: false, error: /^ProvisionedThroughputExceededException /, status: 400 }],
  ['throttling', { lands: false, error: /^ThrottlingException /, status: 400 }],
  // On the answer of a write that landed: the SDK sees DynamoDB's status, then loses the body.
  ['resetMidAnswer', { lands: true, error: /ECONNRESET|aborted|premature close/i }],
  ['truncatedBody', { lands: true, error: /aborted|premature close|JSON|Unexpected end/i }],
  // The SDK's request timeout stops at the headers: only the caller's own deadline ends this one.
  ['stallAfterHeaders', { lands: true, error: /abort/i }],
  ['errorAfterWrite', { lands: true, error: /^InternalServerError /, status: 500 }],
];

it.each(cases)('%s: the call fails as documented; the write lands only if forwarded', async (kind, expected) => {
  const id = `proxy-${kind}`;
  proxy.inject({ kind, operation: 'PutItem', table, delayMs: 800 });
  const failure = await viaProxy.send(new PutCommand({ TableName: table, Item: { id } }), { abortSignal: AbortSignal.timeout(1_500) }).then(
    () => undefined,
    (error: Error & { code?: string; $metadata?: { httpStatusCode?: number } }) => error,
  );
  expect(failure).toBeDefined();
  expect(`${failure!.name} ${failure!.code ?? ''} ${failure!.message}`).toMatch(expected.error);
  expect(failure!.$metadata?.httpStatusCode).toBe(expected.status);
  expect(proxy.calls).toEqual([{ operation: 'PutItem', tables: [table], fault: kind, forwarded: expected.lands }]);
  // The proxy holds back or drops only the answer: a forwarded write is already in the table.
  const { Item } = await direct.send(new GetCommand({ TableName: table, Key: { id }, ConsistentRead: true }));
  expect(Item !== undefined).toBe(expected.lands);
});

it('applies a fault to the matching calls only, after `skip`, for `times` calls', async () => {
  proxy.inject({ kind: 'throttling', operation: 'PutItem', table, skip: 1, times: 1 });
  await viaProxy.send(new GetCommand({ TableName: table, Key: { id: 'other-operation' } }));
  await viaProxy.send(new PutCommand({ TableName: table, Item: { id: 'skipped' } }));
  await expect(viaProxy.send(new PutCommand({ TableName: table, Item: { id: 'refused' } }))).rejects.toMatchObject({
    name: 'ThrottlingException',
  });
  await viaProxy.send(new PutCommand({ TableName: table, Item: { id: 'after' } }));
  expect(proxy.calls.map((call) => [call.operation, call.fault ?? null, call.forwarded])).toEqual([
    ['GetItem', null, true],
    ['PutItem', null, true],
    ['PutItem', 'throttling', false],
    ['PutItem', null, true],
  ]);
});

describe("the rate limiter's modes", () => {
  it('transactionConflict: refused before forwarding with DynamoDB TransactionConflictException, which the SDK does not retry', async () => {
    proxy.inject({ kind: 'transactionConflict', operation: 'PutItem', table });
    const failure = await viaProxy.send(new PutCommand({ TableName: table, Item: { id: 'conflicted' } })).then(
      () => undefined,
      (error: Error & { $metadata?: { httpStatusCode?: number; attempts?: number } }) => error,
    );
    expect(failure?.name).toBe('TransactionConflictException');
    expect(failure?.$metadata?.httpStatusCode).toBe(400);
    expect(proxy.calls).toEqual([{ operation: 'PutItem', tables: [table], fault: 'transactionConflict', forwarded: false }]);
    const { Item } = await direct.send(new GetCommand({ TableName: table, Key: { id: 'conflicted' }, ConsistentRead: true }));
    expect(Item).toBeUndefined();
  });

  it('slowForward: the client gives up, and the write lands after the hold', async () => {
    proxy.inject({ kind: 'slowForward', operation: 'PutItem', table, delayMs: 2_000 });
    await expect(viaProxy.send(new PutCommand({ TableName: table, Item: { id: 'held' } }))).rejects.toThrow(/TimeoutError|timed? ?out/i);
    // Not yet: the request is still held.
    const before = await direct.send(new GetCommand({ TableName: table, Key: { id: 'held' }, ConsistentRead: true }));
    expect(before.Item).toBeUndefined();
    await proxy.settled();
    const after = await direct.send(new GetCommand({ TableName: table, Key: { id: 'held' }, ConsistentRead: true }));
    expect(after.Item).toEqual({ id: 'held' });
    expect(proxy.calls).toEqual([{ operation: 'PutItem', tables: [table], fault: 'slowForward', forwarded: true }]);
  });
});
