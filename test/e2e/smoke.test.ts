import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../lib/project-root';
import { startTestApi, type TestApi } from '../support/api';
import { beforeGetPetSunset, TestClock } from '../support/dynamo';

/**
 * `npm run smoke` against the local API, as CI runs it against `npm start`:
 * the command itself, over real HTTP, on 127.0.0.1 as an operator would type it.
 */
let api: TestApi;
let baseUrl: string;
beforeAll(async () => {
  // The smoke run reads getPet, which works only before its sunset: a clock before it, whatever today's date.
  api = await startTestApi({ clock: new TestClock(beforeGetPetSunset) });
  baseUrl = api.url.replace('//localhost:', '//127.0.0.1:');
});
afterAll(() => api.close());

function smoke(args: string[], key?: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      join(projectRoot, 'node_modules', '.bin', 'tsx'),
      [join(projectRoot, 'scripts', 'smoke.ts'), ...args],
      { timeout: 60_000, env: { ...process.env, PETSTORE_API_KEY: key ?? '' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
      },
    );
  });
}

async function petCount(key: string): Promise<number> {
  const response = await api.call('/pets?limit=100', { key });
  return ((await response.json()) as unknown[]).length;
}

it('passes every check with a valid key, creating one smoke-test pet', async () => {
  const key = await api.issueKey('business');
  const before = await petCount(key);
  const { code, output } = await smoke(['--base-url', baseUrl], key);
  expect(output).toMatch(/^all 8 checks passed$/m);
  expect(output).not.toMatch(/^(FAIL|SKIP)/m);
  expect(code).toBe(0);
  expect(await petCount(key)).toBe(before + 1);
  // The key is never printed, not even its distinctive part.
  expect(output).not.toContain(key.slice(4, 20));
}, 60_000);

it('--read-only creates nothing and still passes', async () => {
  const key = await api.issueKey('business');
  const before = await petCount(key);
  const { code, output } = await smoke(['--base-url', baseUrl, '--read-only'], key);
  expect(output).toMatch(/^SKIP\s+create a pet \(marked as a smoke test\)\s+read-only mode$/m);
  expect(output).toMatch(/^all 7 checks passed$/m);
  expect(code).toBe(0);
  expect(await petCount(key)).toBe(before);
}, 60_000);

it('fails clearly with a wrong key, and runs nothing else against the stage', async () => {
  const { code, output } = await smoke(['--base-url', baseUrl], `psk_${'A'.repeat(43)}`);
  expect(code).toBe(1);
  expect(output).toMatch(/^FAIL\s+authentication: the key is accepted\s+the key was refused \(401 unauthorized\): check PETSTORE_API_KEY/m);
  expect(output).toMatch(/^SKIP\s+rate-limit headers/m);
  expect(output).toMatch(/^1 of 8 checks failed$/m);
}, 60_000);

it('refuses to run without PETSTORE_API_KEY', async () => {
  const { code, output } = await smoke(['--base-url', baseUrl]);
  expect(code).toBe(1);
  expect(output).toMatch(/Set PETSTORE_API_KEY/);
}, 60_000);

it('refuses a base URL that is not a stage URL ending in /v1', async () => {
  const { code, output } = await smoke(['--base-url', baseUrl.replace(/\/v1$/, '')], 'x');
  expect(code).toBe(1);
  expect(output).toMatch(/--base-url must be the stage URL ending in \/v1/);
}, 60_000);
