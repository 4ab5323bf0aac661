import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { freePort } from '../../local/dynamodb-local';
import { testDynamoDbClient, testEndpoint } from '../support/dynamo';

/**
 * `npm start` as a person runs it (the real entry point in a child process),
 * pointed by AWS_ENDPOINT_URL_DYNAMODB at a DynamoDB that is already running
 * (the test run's DynamoDB Local), with its state in a scratch folder
 * (PETSTORE_LOCAL_DIR) so that a developer's own `.local` is never touched.
 */
const projectRoot = join(__dirname, '..', '..');
let scratch: string;
const running = new Set<ChildProcess>();

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'petstore-start-'));
});
afterAll(async () => {
  await Promise.all([...running].map((child) => stopProcess(child)));
  rmSync(scratch, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  port: number;
  stdout: () => string;
  stderr: () => string;
}

/** Another address of this machine than 127.0.0.1: a server bound to 127.0.0.1 alone refuses it (Linux routes all of 127/8 to lo). */
function otherLocalAddress(): string {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address && address.family === 'IPv4' && !address.internal);
  return external?.address ?? '127.0.0.2';
}

function run(
  command: string[],
  env: Record<string, string>,
): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, command, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function startLocal(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const started = run(['--import', 'tsx', 'local/start.ts'], { PETSTORE_LOCAL_DIR: scratch, PORT: String(port), ...env });
  running.add(started.child);
  const deadline = Date.now() + 60_000;
  while (!started.stdout().includes('is running at')) {
    if (started.child.exitCode !== null) throw new Error(`npm start exited with ${started.child.exitCode}: ${started.stderr()}`);
    if (Date.now() > deadline) throw new Error(`npm start did not start within 60 s: ${started.stdout()} ${started.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child: started.child, port, stdout: started.stdout, stderr: started.stderr };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  running.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** `npx petstore-keys …`, as a separate process. */
async function keysTool(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tool = run(['admin/petstore-keys.js', ...args], { AWS_ENDPOINT_URL_DYNAMODB: '', ...env });
  const code = await tool.exited;
  return { code, stdout: tool.stdout(), stderr: tool.stderr() };
}

/** The output's lines holding `marker`, once there are `count` of them (output arrives as the process writes it). */
async function linesOf(output: () => string, marker: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = output()
      .split('\n')
      .filter((line) => line.includes(marker));
    if (lines.length >= count || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function reachable(address: string, port: number): Promise<boolean> {
  try {
    await fetch(`http://${address}:${port}/v1/pets`, { signal: AbortSignal.timeout(5_000) });
    return true;
  } catch {
    return false;
  }
}

it('with AWS_ENDPOINT_URL_DYNAMODB, npm start runs on that DynamoDB, makes its tables, and the key tool finds the same one', async () => {
  const endpoint = testEndpoint();
  const started = await startLocal({ AWS_ENDPOINT_URL_DYNAMODB: endpoint });
  expect(started.stdout()).toContain(`DynamoDB: ${endpoint} (AWS_ENDPOINT_URL_DYNAMODB)`);
  // No DynamoDB Local of its own: no data folder, no pid file.
  expect(existsSync(join(scratch, 'dynamodb'))).toBe(false);
  expect(existsSync(join(scratch, 'dynamodb.pid'))).toBe(false);
  const client = testDynamoDbClient(endpoint);
  for (const table of ['pets', 'apiKeys', 'rateLimits']) {
    await expect(client.send(new DescribeTableCommand({ TableName: `petstore-local-${table}` }))).resolves.toBeDefined();
  }
  client.destroy();

  // The tool told the endpoint by the variable (its endpoint file is elsewhere, empty)…
  const elsewhere = mkdtempSync(join(tmpdir(), 'petstore-keys-'));
  const issued = await keysTool(['issue', '--plan', 'free', '--owner', 'Acme Ltd', '--json'], {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    PETSTORE_LOCAL_DIR: elsewhere,
  });
  rmSync(elsewhere, { recursive: true, force: true });
  expect({ code: issued.code, stderr: issued.stderr }).toEqual({ code: 0, stderr: '' });
  const { keyId, secret } = JSON.parse(issued.stdout) as { keyId: string; secret: string };
  // …issues a key the API accepts…
  const response = await fetch(`http://127.0.0.1:${started.port}/v1/pets`, { headers: { Authorization: `Bearer ${secret}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-ratelimit-limit')).toBe('60');
  // …and the tool finding it through npm start's endpoint file sees the request the API counted.
  const shown = await keysTool(['show', keyId], { PETSTORE_LOCAL_DIR: scratch });
  expect(shown.code).toBe(0);
  expect(shown.stdout).toMatch(/^Today\s+1 of 1,000 requests/m);

  // The operator's log (local/refusal-log.ts): one line per refused request, with why, never the secret.
  const unknownKey = `${secret.slice(0, -4)}AAAA`;
  expect((await fetch(`http://127.0.0.1:${started.port}/v1/pets`, { headers: { Authorization: `Bearer ${unknownKey}` } })).status).toBe(
    401,
  );
  expect((await fetch(`http://127.0.0.1:${started.port}/v1/nothing-here`, { headers: { Authorization: `Bearer ${secret}` } })).status).toBe(
    404,
  );
  const refusals = await linesOf(started.stdout, '"message":"refused"', 2);
  expect(refusals.map((line) => JSON.parse(line))).toEqual([
    expect.objectContaining({ status: 401, code: 'unauthorized', reason: 'unknown_key', resourcePath: '/pets' }),
    expect.objectContaining({ status: 404, code: 'not_found', reason: 'no_such_route' }),
  ]);
  for (const line of refusals) expect(line).not.toContain(secret.slice('psk_'.length, 20));

  // Private by default: this machine's other address is refused.
  expect(await reachable('127.0.0.1', started.port)).toBe(true);
  expect(await reachable(otherLocalAddress(), started.port)).toBe(false);

  await stopProcess(started.child);
  expect(existsSync(join(scratch, 'local-endpoint.json'))).toBe(false);
  const after = await keysTool(['list'], { PETSTORE_LOCAL_DIR: scratch });
  expect(after.code).toBe(1);
  expect(after.stderr).toMatch(/npm start is not running/);
});

it('HOST opts into other interfaces with a warning; the development key stays and is made 0600 again at every start', async () => {
  const endpoint = testEndpoint();
  const first = await startLocal({ AWS_ENDPOINT_URL_DYNAMODB: endpoint });
  await stopProcess(first.child);
  const keyFile = join(scratch, 'development-api-key');
  const key = readFileSync(keyFile, 'utf8').trim();
  chmodSync(keyFile, 0o644);

  const open = await startLocal({ AWS_ENDPOINT_URL_DYNAMODB: endpoint, HOST: '0.0.0.0' });
  expect(open.stderr()).toContain('Warning: HOST=0.0.0.0: the API answers other machines on your network too');
  expect(await reachable(otherLocalAddress(), open.port)).toBe(true);
  expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  expect(open.stdout()).toContain(`Development API key (Business plan): ${key}`);
  await stopProcess(open.child);
});

it('an AWS_ENDPOINT_URL_DYNAMODB that does not answer: npm start stops with a message naming it, and serves nothing', async () => {
  const endpoint = `http://127.0.0.1:${await freePort()}`;
  const port = await freePort();
  const started = run(['--import', 'tsx', 'local/start.ts'], {
    PETSTORE_LOCAL_DIR: scratch,
    PORT: String(port),
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
  });
  running.add(started.child);
  expect(await started.exited).toBe(1);
  running.delete(started.child);
  expect(started.stderr()).toContain(`The DynamoDB at ${endpoint} did not let us create the tables`);
  expect(started.stderr()).not.toMatch(/\n\s+at /);
  expect(await reachable('127.0.0.1', port)).toBe(false);
});

it('a busy port: npm start stops with one line naming the port and the way out, not a stack trace', async () => {
  const first = await startLocal({});
  const second = run(['--import', 'tsx', 'local/start.ts'], { PETSTORE_LOCAL_DIR: scratch, PORT: String(first.port) });
  running.add(second.child);
  expect(await second.exited).toBe(1);
  running.delete(second.child);
  expect(second.stderr().trim()).toBe(
    `Port ${first.port} is in use on 127.0.0.1: stop what runs there, or start on another port, e.g. PORT=3001 npm start`,
  );
  // Before a second DynamoDB Local opened the first one's data: their locks made table creation fail now and then.
  expect(second.stdout()).not.toContain('Starting DynamoDB Local');
  await stopProcess(first.child);
});

it('one development key across endpoints: switching AWS_ENDPOINT_URL_DYNAMODB on keeps the key, and it works there', async () => {
  const keyFile = join(scratch, 'development-api-key');
  rmSync(keyFile, { force: true });
  // A new key, made in npm start's own DynamoDB Local: the other DynamoDB has never seen it.
  const own = await startLocal({});
  await stopProcess(own.child);
  const key = readFileSync(keyFile, 'utf8').trim();

  const switched = await startLocal({ AWS_ENDPOINT_URL_DYNAMODB: testEndpoint() });
  expect(readFileSync(keyFile, 'utf8').trim()).toBe(key);
  expect(switched.stdout()).toContain(`Development API key (Business plan): ${key}`);
  const response = await fetch(`http://127.0.0.1:${switched.port}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  await stopProcess(switched.child);
});
