import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../openapi/contract-files';
import { startTestApi, type TestApi } from '../support/api';
import { beforeGetPetSunset, TestClock } from '../support/dynamo';

/**
 * client/ is a package of its own: `npm pack` builds and packs it, the tarball
 * installs into an empty project (no network: it has no dependencies), and a
 * short script there talks to the local API over HTTP through it.
 */
const run = promisify(execFile);
const clientDir = join(projectRoot, 'client');
const work = mkdtempSync(join(tmpdir(), 'petstore-client-package-'));
const app = join(work, 'app');
let api: TestApi;
let tarball: string;

beforeAll(async () => {
  // The scripts read a pet with getPet, which exists only before its sunset: a clock before it, whatever today's date.
  api = await startTestApi({ clock: new TestClock(beforeGetPetSunset) });
  // npm runs the package's prepack script (the build) with its node_modules/.bin and its parents' on PATH.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: clientDir });
  tarball = join(work, (JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[])[0]?.filename ?? '');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'client-package-check', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app });
}, 180_000);

afterAll(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

it('packs built ESM with declarations, its README and package.json, and no TypeScript source', async () => {
  const { stdout } = await run('tar', ['-tzf', tarball]);
  const files = stdout.trim().split('\n').sort();
  expect(files).toEqual(
    expect.arrayContaining(['package/README.md', 'package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts']),
  );
  expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  const installed = join(app, 'node_modules', '@petstore', 'client');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    exports: unknown;
    type: string;
  };
  expect(manifest).toMatchObject({
    name: '@petstore/client',
    version: '1.0.0',
    type: 'module',
    exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
  });
  // Built output imports nothing but itself: no server code, no dependency.
  for (const file of readdirSync(join(installed, 'dist')).filter((name) => name.endsWith('.js'))) {
    const imports = [...readFileSync(join(installed, 'dist', file), 'utf8').matchAll(/from\s+["']([^"']+)["']/g)].map(
      ([, target]) => target,
    );
    for (const target of imports) expect(target).toMatch(/^\.\/[\w-]+\.js$/);
  }
});

it('installed from the tarball into an empty project, it creates, pages, and reads a typed error from the local API', async () => {
  writeFileSync(
    join(app, 'main.js'),
    `import { PetStoreClient, PetStoreError } from '@petstore/client';
const petStore = new PetStoreClient({ baseUrl: process.env.API_URL, apiKey: process.env.API_KEY });
const created = [];
for (let index = 0; index < 3; index++) created.push(await petStore.createPet({ name: 'Packed ' + index, categoryId: 3, status: 'pending' }));
const listed = [];
for await (const pet of petStore.allPets({ status: 'pending', limit: 2 })) listed.push(pet.id);
let notFound;
try {
  await petStore.getPet(9007199254740991);
} catch (error) {
  notFound = error instanceof PetStoreError ? { status: error.status, code: error.code } : String(error);
}
console.log(JSON.stringify({ created: created.map((pet) => pet.id), listed, notFound }));
`,
  );
  const { stdout } = await run(process.execPath, ['main.js'], {
    cwd: app,
    env: { ...process.env, API_URL: api.url, API_KEY: await api.issueKey('business') },
  });
  const result = JSON.parse(stdout.trim()) as { created: number[]; listed: number[]; notFound: unknown };
  expect(result.created).toHaveLength(3);
  expect(result.listed).toEqual(result.created);
  expect(result.notFound).toEqual({ status: 404, code: 'not_found' });
}, 60_000);

it("its declarations type a consumer that resolves modules as Node.js does (NodeNext), and the reference page's client examples, with TypeScript 5", async () => {
  writeFileSync(
    join(app, 'check.ts'),
    `import { PetStoreClient, PetStoreError, type ErrorCode, type Pet } from '@petstore/client';
const petStore = new PetStoreClient({ baseUrl: 'http://localhost:3000/v1', apiKey: 'psk_x' });
export async function first(): Promise<Pet | undefined> {
  try {
    for await (const pet of petStore.allPets({ status: 'sold' })) return pet;
  } catch (error) {
    const code: ErrorCode | undefined = error instanceof PetStoreError ? error.code : undefined;
    if (code === 'rate_limited') return undefined;
  }
  return undefined;
}
`,
  );
  // The client examples of the reference page (x-codeSamples) must compile against the package as they stand.
  const document = JSON.parse(readFileSync(join(projectRoot, 'openapi', 'openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string; 'x-codeSamples': { label: string; source: string }[] }>>;
  };
  const samples = Object.values(document.paths).flatMap((item) => Object.values(item));
  for (const operation of samples) {
    const sample = operation['x-codeSamples'].find((candidate) => candidate.label === '@petstore/client');
    expect(sample).toBeDefined();
    writeFileSync(join(app, `sample-${operation.operationId}.ts`), sample?.source ?? '');
  }
  const tsc = join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = [
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--types',
    'node',
    '--typeRoots',
    join(projectRoot, 'node_modules', '@types'),
    'check.ts',
    ...samples.map((operation) => `sample-${operation.operationId}.ts`),
  ];
  const result = await run(process.execPath, [tsc, ...flags], { cwd: app }).catch((error: { stdout: string }) => error);
  expect(result.stdout).toBe('');
}, 60_000);
