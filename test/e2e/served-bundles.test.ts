import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { lambdaFunctions } from '../../definitions/routes';
import { ensureFunctionBundles, readCurrent, staleInputs } from '../../local/function-bundles';
import { startTestApi, type TestApi } from '../support/api';

/**
 * The local API serves the bundles `cdk deploy` would upload, not the sources:
 * each function's process (local/lambda-runtime-worker.mjs) reports the file it
 * imported and the SHA-256 of the bytes it read, which must be the esbuild
 * output recorded in the build's manifest; and a request is answered by that
 * process. Nothing is added to the API's responses to know it.
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

it('runs every function from its built bundle, index.handler of index.mjs, in a process of its own', async () => {
  const current = readCurrent()!;
  expect(Object.keys(api.functions).sort()).toEqual(lambdaFunctions.map(({ name }) => name).sort());
  for (const { name } of lambdaFunctions) {
    const loaded = await api.functions[name]!.loaded();
    expect(loaded.file).toBe(join(current.dir, name, 'index.mjs'));
    expect(loaded.sha256).toBe(current.manifest.functions[name]!.sha256);
    expect(sha256(loaded.file)).toBe(loaded.sha256);
  }
});

it('answers a request from those processes', async () => {
  const before = { getPet: api.functions.getPet!.invocations, authorizer: api.functions.authorizer!.invocations };
  const response = await api.call('/pets/424242');
  expect(response.status).toBe(404);
  expect(api.functions.getPet!.invocations).toBe(before.getPet + 1);
  // The key is new to this gateway's authorizer cache: the authorizer's process ran too.
  expect(api.functions.authorizer!.invocations).toBe(before.authorizer + 1);
});

describe('a stale bundle is never served', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'petstore-bundles-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('finds the current bundles fresh: every input hashes as recorded', () => {
    expect(staleInputs(readCurrent()!.manifest)).toEqual([]);
  });

  it('names the input that changed, and every input when the build options changed', () => {
    const { manifest } = readCurrent()!;
    const [input] = Object.keys(manifest.inputs).filter((file) => file.startsWith('functions/'));
    expect(staleInputs({ ...manifest, inputs: { ...manifest.inputs, [input!]: 'an-older-hash' } })).toEqual([input]);
    expect(staleInputs({ ...manifest, buildKey: 'other-options' })).toHaveLength(1);
  });

  it('rebuilds before serving when an input differs from what the bundles were built from', async () => {
    // A copy of the current build, recorded as built from an older version of one source file.
    const current = readCurrent()!;
    const copy = join(scratch, basename(current.dir));
    cpSync(current.dir, copy, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(copy, 'manifest.json'), 'utf8'));
    manifest.inputs['functions/get-pet/handler.ts'] = 'an-older-hash';
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(manifest));
    writeFileSync(join(scratch, 'current'), basename(copy));

    const served = await ensureFunctionBundles(scratch);
    expect(dirname(served.getPet!.taskRoot)).not.toBe(copy);
    expect(staleInputs(readCurrent(scratch)!.manifest)).toEqual([]);
    // Fresh now: the next start serves the same build without building again.
    expect((await ensureFunctionBundles(scratch)).getPet!.file).toBe(served.getPet!.file);
  }, 120_000);
});
