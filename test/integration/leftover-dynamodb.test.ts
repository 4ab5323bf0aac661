import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopLeftoverDynamoDbs } from '../../local/dynamodb-local';

/**
 * A test run killed outright (SIGKILL: no teardown) leaves its java child
 * running. The next run's global setup finds it through the run's pid file and
 * stops it, and touches nothing else: not a run still going, not a process that
 * merely reuses the pid.
 */
const projectRoot = join(__dirname, '..', '..');
let pidDirectory: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  pidDirectory = mkdtempSync(join(tmpdir(), 'petstore-pids-'));
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(pidDirectory, { recursive: true, force: true });
});

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const answers = async (endpoint: string) => {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
};

/** A process's command line: /proc on Linux, ps elsewhere. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return spawnSync('ps', ['-p', String(pid), '-o', 'args='], { encoding: 'utf8' }).stdout ?? '';
  }
}

/** The test suite's own global setup, in a process of its own that we then kill without warning. */
async function startRunAndKillIt(): Promise<{ pid: number; port: number; endpoint: string }> {
  const run = spawn(
    process.execPath,
    [
      '-r',
      'tsx/cjs',
      '-e',
      "require('./test/support/global-setup.ts').default().then(() => console.log(process.env.TEST_DYNAMODB_LOCAL_ENDPOINT))",
    ],
    {
      cwd: projectRoot,
      env: { ...process.env, TEST_DYNAMODB_PID_DIR: pidDirectory },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(run);
  let stdout = '';
  await new Promise<void>((resolve, reject) => {
    run.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve();
    });
    run.once('exit', (code) => reject(new Error(`the run exited early (${code})`)));
  });
  const exited = new Promise((resolve) => run.once('exit', resolve));
  run.kill('SIGKILL');
  await exited;
  const [file] = readdirSync(pidDirectory);
  expect(file).toBe(`${run.pid}.pid`);
  const record = JSON.parse(readFileSync(join(pidDirectory, file as string), 'utf8')) as { pid: number; port: number };
  return { ...record, endpoint: stdout.trim() };
}

it('stops the DynamoDB Local of a run that was killed outright, and removes its pid file', async () => {
  const leftover = await startRunAndKillIt();
  // Its java child outlived it, still serving.
  expect(isAlive(leftover.pid)).toBe(true);
  expect(await answers(leftover.endpoint)).toBe(true);
  // DynamoDB Local's -help: "-disableTelemetry  When specified, DynamoDB Local will not send any telemetry."
  expect(commandLine(leftover.pid)).toContain('-disableTelemetry');

  expect(await stopLeftoverDynamoDbs(pidDirectory)).toEqual([leftover.pid]);
  expect(await answers(leftover.endpoint)).toBe(false);
  expect(readdirSync(pidDirectory)).toEqual([]);
});

it("leaves alone a run that is still going, and a process that merely reuses a dead run's pid", async () => {
  const bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(bystander);
  const bystanderPid = bystander.pid as number;
  // A dead owner's file whose pid now belongs to an unrelated process.
  writeFileSync(join(pidDirectory, '999999999.pid'), JSON.stringify({ pid: bystanderPid, ownerPid: 999_999_999, port: 8000 }));
  // A run still going (this very process owns it).
  const going = join(pidDirectory, `${process.pid}.pid`);
  writeFileSync(going, JSON.stringify({ pid: bystanderPid, ownerPid: process.pid, port: 8000 }));

  expect(await stopLeftoverDynamoDbs(pidDirectory)).toEqual([]);
  expect(isAlive(bystanderPid)).toBe(true);
  expect(existsSync(going)).toBe(true);
  expect(existsSync(join(pidDirectory, '999999999.pid'))).toBe(false);
});
