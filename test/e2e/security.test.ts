import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { authorizer } from '../../definitions/routes';
import { createHandler as createAuthorizer } from '../../functions/authorizer/handler';
import { hashApiKey } from '../../functions/customers';
import { postJson, revokeInKeyTable, startTestApi, type TestApi } from '../support/api';
import { requestAuthorizerEvent } from '../support/api-gateway-events';
import { atInstant, beforeGetPetSunset, TestClock } from '../support/dynamo';

/** Secrets stay secret: logs, error messages, key checks, revocation. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

function captureOutput() {
  const lines: string[] = [];
  const capture = (chunk: unknown) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  };
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  return {
    lines,
    restore: () => {
      stdout.mockRestore();
      stderr.mockRestore();
    },
  };
}

it('logs one JSON line per answer of 400 or more (a success is in the access log) with the request id and key id, and never a secret or an Authorization value', async () => {
  // The functions run in processes of their own (the bundles, as in Lambda): their log level is set when they start.
  const logged = await startTestApi({ logLevel: 'DEBUG' });
  const key = await logged.issueKey('pro');
  const wrongKey = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
  const output = captureOutput();
  try {
    await logged.call('/pets', { ...postJson({ name: 'Logged', categoryId: 1 }), key });
    await logged.call('/pets?limit=0', { key });
    await atInstant(logged.clock, beforeGetPetSunset, () => logged.call('/pets/999999', { key }));
    await logged.call('/pets', { key: wrongKey });
    await logged.call('/pets', { key: null, headers: { Authorization: `Basic ${Buffer.from('user:secret').toString('base64')}` } });
  } finally {
    output.restore();
    await logged.close();
  }
  const requestLines = output.lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.message === 'request');
  expect(requestLines.map((entry) => entry.statusCode)).toEqual([400, 404]);
  for (const entry of requestLines) {
    expect(entry).toMatchObject({ requestId: expect.any(String), keyId: expect.stringMatching(/^key_/), operation: expect.any(String) });
  }
  const everything = output.lines.join('\n');
  for (const secret of [key, wrongKey, key.slice(4), 'dXNlcjpzZWNyZXQ=', 'Bearer ']) expect(everything).not.toContain(secret);
});

it('never reveals internals in an error message, even for an unexpected failure', async () => {
  // The pets table deleted under the API: a bug-like failure (not a dependency outage).
  const broken = await startTestApi({ clock: new TestClock(beforeGetPetSunset) });
  const key = await broken.issueKey('pro');
  await broken.dependencies.db.send(new DeleteTableCommand({ TableName: broken.dependencies.tableNames.pets }));
  try {
    const response = await broken.call('/pets/1', { key });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe('internal_error');
    expect(body.message).not.toMatch(/table|no-such|Exception|Dynamo|at |\.ts/i);
  } finally {
    await broken.close();
  }
});

it('checks keys by their hash: a near-miss and a far-miss key cost the same single lookup, and the secret never reaches DynamoDB', async () => {
  const key = await api.issueKey('pro');
  const sent: unknown[] = [];
  const db = api.dependencies.db;
  const recordingDb = new Proxy(db, {
    get: (target, property, receiver) =>
      property === 'send'
        ? (command: { input: unknown }) => {
            sent.push(command.input);
            return target.send(command as never);
          }
        : Reflect.get(target, property, receiver),
  });
  const authorize = createAuthorizer({ ...api.dependencies, db: recordingDb });
  const event = (token: string) =>
    requestAuthorizerEvent({ method: 'GET', resource: '/pets', path: '/pets', headers: { Authorization: `Bearer ${token}` } });
  const nearMiss = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
  const farMiss = `psk_${'Z'.repeat(43)}`;
  for (const token of [nearMiss, farMiss]) {
    sent.length = 0;
    await expect(authorize(event(token))).rejects.toThrow('Unauthorized');
    expect(sent).toEqual([{ TableName: api.dependencies.tableNames.apiKeys, Key: { keyHash: hashApiKey(token) }, ConsistentRead: true }]);
    expect(JSON.stringify(sent)).not.toContain(token.slice(4));
  }
});

it(`stops a revoked key within the authorizer cache TTL (${authorizer.resultsCacheTtlSeconds} s), not later`, async () => {
  const key = await api.issueKey('pro');
  expect((await api.call('/pets', { key })).status).toBe(200);
  await revokeInKeyTable(api.dependencies, key);
  const revokedAt = api.clock.now;
  api.clock.now = revokedAt + (authorizer.resultsCacheTtlSeconds - 1) * 1000;
  expect((await api.call('/pets', { key })).status).toBe(200);
  api.clock.now = revokedAt + authorizer.resultsCacheTtlSeconds * 1000;
  expect((await api.call('/pets', { key })).status).toBe(401);
});
