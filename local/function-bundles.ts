import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, version as esbuildVersion } from 'esbuild';
import { lambdaEsbuildOptions } from '../definitions/lambda-function';
import { lambdaFunctions } from '../definitions/routes';

/**
 * The Lambda bundles that `npm start` and the end-to-end tests serve, built by
 * esbuild with the CDK stack's own options (definitions/lambda-function.ts) from
 * the same entry files (the route table's handlerEntry), into
 * `.local/bundles/<build>/<function>/index.mjs`.
 *
 * A bundle is never served stale: every build records the SHA-256 of each file
 * esbuild read (its metafile's inputs, node_modules included), of tsconfig.json
 * and package-lock.json, and the options and esbuild version; each start hashes
 * those files again and builds afresh when anything differs.
 */
const projectRoot = join(__dirname, '..');
const defaultBundlesDir = join(projectRoot, '.local', 'bundles');
/** Not seen by esbuild's metafile, yet they change its output. */
const alsoHashed = ['tsconfig.json', 'package-lock.json'];

export interface FunctionBundle {
  /** The route's operationId, or `authorizer`. */
  name: string;
  /** The directory Lambda would unpack the asset into (LAMBDA_TASK_ROOT). */
  taskRoot: string;
  /** `<taskRoot>/index.mjs`: what the handler `index.handler` names. */
  file: string;
  /** SHA-256 of index.mjs as esbuild wrote it. */
  sha256: string;
}

interface Manifest {
  buildKey: string;
  inputs: Record<string, string>;
  functions: Record<string, { entry: string; sha256: string }>;
}

/** What else decides the output: the options, esbuild's version, the entry files. */
const buildKey = sha256(
  JSON.stringify({ lambdaEsbuildOptions, esbuildVersion, lambdaFunctions: lambdaFunctions.map(({ name, entry }) => ({ name, entry })) }),
);

/**
 * The current bundles, rebuilt first if any input changed since they were
 * built (or none were). Concurrent callers (test workers) may each build; each
 * build goes to a directory of its own and the pointer to it is swapped
 * atomically, so nobody ever reads a half-written bundle.
 */
export async function ensureFunctionBundles(bundlesDir = defaultBundlesDir): Promise<Record<string, FunctionBundle>> {
  const current = readCurrent(bundlesDir);
  if (current && staleInputs(current.manifest).length === 0) return bundlesOf(current.dir, current.manifest);
  return buildFunctionBundles(bundlesDir);
}

/** Builds every function now, whatever is there. */
export async function buildFunctionBundles(bundlesDir = defaultBundlesDir): Promise<Record<string, FunctionBundle>> {
  const name = `build-${Date.now()}-${randomUUID().slice(0, 8)}`;
  const dir = join(bundlesDir, name);
  const inputs = new Set(alsoHashed);
  const functions: Manifest['functions'] = {};
  await Promise.all(
    lambdaFunctions.map(async ({ name: fn, entry }) => {
      const outfile = join(dir, fn, 'index.mjs');
      const result = await build({
        ...lambdaEsbuildOptions,
        mainFields: [...lambdaEsbuildOptions.mainFields],
        external: [...lambdaEsbuildOptions.external],
        entryPoints: [join(projectRoot, entry)],
        outfile,
        absWorkingDir: projectRoot,
        metafile: true,
        logLevel: 'error',
      });
      for (const input of Object.keys(result.metafile.inputs)) inputs.add(input);
      functions[fn] = { entry, sha256: sha256(readFileSync(outfile)) };
    }),
  );
  const manifest: Manifest = { buildKey, inputs: hashInputs([...inputs].sort()), functions };
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  const pointer = join(bundlesDir, `current.${process.pid}.tmp`);
  writeFileSync(pointer, name);
  renameSync(pointer, join(bundlesDir, 'current'));
  removeOldBuilds(bundlesDir, name);
  return bundlesOf(dir, manifest);
}

/** The inputs whose content is not what the bundles were built from (all of them when the options changed). */
export function staleInputs(manifest: Manifest): string[] {
  if (manifest.buildKey !== buildKey) return ['(esbuild options, esbuild version or entry files)'];
  return Object.entries(manifest.inputs)
    .filter(([file, hash]) => hashFile(file) !== hash)
    .map(([file]) => file);
}

/** The current build's manifest and directory, if there is one. */
export function readCurrent(bundlesDir = defaultBundlesDir): { dir: string; manifest: Manifest } | undefined {
  try {
    const dir = join(bundlesDir, readFileSync(join(bundlesDir, 'current'), 'utf8').trim());
    return { dir, manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest };
  } catch {
    return undefined;
  }
}

function bundlesOf(dir: string, manifest: Manifest): Record<string, FunctionBundle> {
  return Object.fromEntries(
    Object.entries(manifest.functions).map(([name, { sha256 }]) => {
      const taskRoot = join(dir, name);
      return [name, { name, taskRoot, file: join(taskRoot, 'index.mjs'), sha256 }];
    }),
  );
}

function hashInputs(files: string[]): Record<string, string> {
  return Object.fromEntries(files.map((file) => [file, hashFile(file)]));
}

/** esbuild names inputs relative to the project root; a file gone is a change. */
function hashFile(file: string): string {
  try {
    return sha256(readFileSync(join(projectRoot, file)));
  } catch {
    return 'missing';
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Earlier builds, once a newer one is current. A build younger than a minute is
 * left alone: another process may have just started loading it.
 */
function removeOldBuilds(bundlesDir: string, keep: string): void {
  mkdirSync(bundlesDir, { recursive: true });
  for (const entry of readdirSync(bundlesDir)) {
    if (!entry.startsWith('build-') || entry === keep) continue;
    const path = join(bundlesDir, entry);
    if (Date.now() - statSync(path).mtimeMs > 60_000) rmSync(path, { recursive: true, force: true });
  }
}
