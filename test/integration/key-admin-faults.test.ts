import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AdminError } from '../../admin/errors';
import { issueKey, revokeKey, rotateKey, setPlan } from '../../admin/key-admin';
import { LOCAL_KEY_TOOL_CALL_BUDGET, localTarget } from '../../admin/targets/local';
import type { KeyAdminTarget } from '../../admin/targets/target';
import { CustomerTable, hashApiKey } from '../../functions/customers';
import { createDocumentClient } from '../../functions/runtime/dependencies';
import { localCredentials } from '../../local/local-api';
import { createTestTables, testDocumentClient, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';

/**
 * #21 defect 4: the key tool when DynamoDB's answers are lost. It talks to
 * DynamoDB as `npx petstore-keys` does on the local target (one SDK attempt per
 * call), through the fault proxy. A write whose answer was lost is retried
 * (same key, same transaction token: applied once) and read back; the tool
 * reports what is now true — never "nothing was written" beside a change made.
 */
const NOW = Date.parse('2026-03-01T12:00:00Z');
let proxy: DynamoDbFaultProxy;
let target: KeyAdminTarget;
let keys: CustomerTable;
let viaProxy: DynamoDBDocumentClient;
let direct: DynamoDBDocumentClient;

beforeAll(async () => {
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
  const tableNames = await createTestTables();
  viaProxy = createDocumentClient({
    endpoint: proxy.endpoint,
    region: 'local',
    ...localCredentials(),
    budget: LOCAL_KEY_TOOL_CALL_BUDGET,
  });
  direct = testDocumentClient();
  target = localTarget(viaProxy, tableNames);
  keys = new CustomerTable(direct, tableNames);
});
afterAll(async () => {
  viaProxy.destroy();
  direct.destroy();
  await proxy.close();
});
afterEach(() => proxy.clear());

const anActiveKey = async () => (await issueKey(target, { plan: 'pro', owner: 'Acme Ltd' }, NOW)).key.keyId;

it('issue: the answer to the write is lost — retried, the same key written once, its secret shown', async () => {
  // A new key is its customer's record and its secret, written in one transaction.
  proxy.inject({ kind: 'drop', operation: 'TransactWriteItems' });
  const issued = await issueKey(target, { plan: 'free', owner: 'Lost Answer Ltd' }, NOW);
  const stored = await keys.findByHash(hashApiKey(issued.secret));
  expect(stored?.keyId).toBe(issued.key.keyId);
  expect(proxy.forwarded('TransactWriteItems')).toHaveLength(2);
});

it('rotate: the answer to the transaction is lost — the successor is stored once and its secret shown', async () => {
  const keyId = await anActiveKey();
  proxy.inject({ kind: 'drop', operation: 'TransactWriteItems' });
  const rotated = await rotateKey(target, keyId, 86_400_000, NOW);
  const successor = await keys.findByHash(hashApiKey(rotated.secret));
  expect(successor).toMatchObject({ keyId: rotated.successor.keyId, status: 'active' });
  expect((await keys.findById(keyId))?.expiresAt).toBe(new Date(NOW + 86_400_000).toISOString());
});

it('rotate: every try unanswered after the first landed — read back, the successor secret shown', async () => {
  const keyId = await anActiveKey();
  const callsBefore = proxy.calls.length;
  proxy.inject({ kind: 'drop', operation: 'TransactWriteItems', times: 1 }, { kind: 'reset', operation: 'TransactWriteItems', times: 2 });
  const rotated = await rotateKey(target, keyId, 0, NOW);
  expect((await keys.findByHash(hashApiKey(rotated.secret)))?.keyId).toBe(rotated.successor.keyId);
  expect(proxy.calls.slice(callsBefore).filter((call) => call.operation === 'TransactWriteItems')).toHaveLength(3);
});

it('rotate: tries and read-back all unanswered — says it is unknown, names the successor and shows its secret', async () => {
  const keyId = await anActiveKey();
  proxy.inject({ kind: 'drop', operation: 'TransactWriteItems', times: 1 }, { kind: 'reset', operation: 'TransactWriteItems', times: 2 });
  // The first two GetItems are the command's own read of the key (its secret, its customer); the third, the read-back.
  proxy.inject({ kind: 'reset', operation: 'GetItem', skip: 2, times: 1 });
  const failure = await rotateKey(target, keyId, 0, NOW).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(AdminError);
  const message = (failure as Error).message;
  expect(message).toMatch(new RegExp(`it is unknown whether ${keyId} was rotated`));
  const secret = /its secret is (psk_\S+)/.exec(message)?.[1];
  // The secret named is the successor's, which did land: the customer's key is not left to die unannounced.
  expect((await keys.findByHash(hashApiKey(secret ?? '')))?.status).toBe('active');
  expect(message).not.toMatch(/nothing was written/);
});

it('rotate: never reaching DynamoDB — checked afterwards, nothing was written, and the key is as it was', async () => {
  const keyId = await anActiveKey();
  proxy.inject({ kind: 'reset', operation: 'TransactWriteItems', times: 3 });
  await expect(rotateKey(target, keyId, 0, NOW)).rejects.toThrow(/Checked afterwards: nothing was written\. Run the command again\./);
  expect((await keys.findById(keyId))?.expiresAt).toBeUndefined();
});

it('revoke and set-plan: the answer is lost — the change is made once and reported as made', async () => {
  const revokedId = await anActiveKey();
  proxy.inject({ kind: 'drop', operation: 'TransactWriteItems' });
  const revoked = await revokeKey(target, revokedId, NOW + 1_000);
  expect(revoked.key.status).toBe('revoked');
  expect((await keys.findById(revokedId))?.status).toBe('revoked');

  const movedId = await anActiveKey();
  proxy.inject({ kind: 'errorAfterWrite', operation: 'TransactWriteItems' });
  const moved = await setPlan(target, movedId, { plan: 'business' }, NOW + 2_000);
  expect(moved.key.plan).toBe('business');
  expect((await keys.findById(movedId))?.plan).toBe('business');
});
