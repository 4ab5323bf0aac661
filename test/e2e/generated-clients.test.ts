import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DOCUMENT_PATH, projectRoot } from '../../openapi/contract-files';
import { startTestApi, type TestApi } from '../support/api';
import { beforeGetPetSunset, TestClock } from '../support/dynamo';

/**
 * Clients generated from openapi/openapi.json by two independent generators —
 * openapi-typescript + openapi-fetch, and @hey-api/openapi-ts — into a temporary
 * folder, type-checked with TypeScript 5, then used unmodified (scripts in
 * test/fixtures/generated-clients/) against the local API over HTTP: 45 creates, paging
 * through all of them with the typed X-Next-Cursor header, one get, and the
 * typed Error objects of a 400 and a 404.
 */
const run = promisify(execFile);
const bin = (path: string) => join(projectRoot, 'node_modules', path);
const folder = mkdtempSync(join(tmpdir(), 'petstore-generated-clients-'));
let api: TestApi;
let apiKey: string;

beforeAll(async () => {
  // The scripts read a pet with getPet, which exists only before its sunset: a clock before it, whatever today's date.
  api = await startTestApi({ clock: new TestClock(beforeGetPetSunset) });
  apiKey = await api.issueKey('business');
  symlinkSync(join(projectRoot, 'node_modules'), join(folder, 'node_modules'), 'dir');
  copyFileSync(join(projectRoot, DOCUMENT_PATH), join(folder, 'openapi.json'));
  for (const script of ['openapi-fetch-script.ts', 'hey-api-script.ts'])
    copyFileSync(join(__dirname, '..', 'fixtures', 'generated-clients', script), join(folder, script));
  writeFileSync(
    join(folder, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        module: 'preserve',
        moduleResolution: 'bundler',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
      },
    }),
  );
  // Generation is asynchronous: the API serves from this very process.
  // As client/openapi-types.ts is generated: a field with a default (NewPet.status) stays optional to send.
  await run(
    process.execPath,
    [bin('openapi-typescript/bin/cli.js'), 'openapi.json', '--default-non-nullable=false', '--output', 'schema.d.ts'],
    { cwd: folder },
  );
  await run(
    process.execPath,
    [bin('@hey-api/openapi-ts/bin/run.js'), '--input', 'openapi.json', '--output', 'hey-api', '--client', '@hey-api/client-fetch'],
    { cwd: folder },
  );
}, 180_000);

afterAll(async () => {
  await api?.close();
  rmSync(folder, { recursive: true, force: true });
});

it('both generated clients and the scripts that use them type-check with TypeScript 5', async () => {
  const { stdout } = await run(process.execPath, [bin('typescript/bin/tsc'), '--version']);
  expect(stdout).toMatch(/^Version 5\./);
  const check = await run(process.execPath, [bin('typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: folder }).catch(
    (error: { stdout: string }) => error,
  );
  expect(check.stdout).toBe('');
}, 120_000);

interface ScriptResult {
  created: number[];
  seen: number[];
  pages: number;
  one: unknown;
  first: unknown;
  badRequest: unknown;
  notFound: unknown;
}

it.each([
  ['openapi-typescript + openapi-fetch', 'openapi-fetch-script.ts'],
  ['@hey-api/openapi-ts', 'hey-api-script.ts'],
])(
  '%s: creates 45 pets, pages through all of them, gets one, and reads a typed 400 and 404',
  async (_, script) => {
    const { stdout } = await run(process.execPath, [bin('tsx/dist/cli.mjs'), script], {
      cwd: folder,
      env: { ...process.env, API_URL: api.url, API_KEY: apiKey },
    });
    const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ScriptResult;
    expect(result.created).toHaveLength(45);
    expect(result.seen).toEqual([...result.created].sort((a, b) => a - b));
    expect(result.pages).toBe(5);
    expect(result.one).toEqual(result.first);
    expect(result.badRequest).toEqual({ code: 'invalid_request', message: expect.stringContaining('name'), status: 400 });
    expect(result.notFound).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  },
  120_000,
);
