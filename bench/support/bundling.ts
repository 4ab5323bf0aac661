import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { lambdaEsbuildOptions } from '../../definitions/lambda-function';

/**
 * The esbuild options of every Lambda function of the CDK stack
 * (definitions/lambda-function.ts). run.ts says whether a bundle is byte-identical
 * to a cdk.out asset when a synthesized cdk.out is present.
 */
export const lambdaBundleOptions = lambdaEsbuildOptions;

export interface BuiltBundle {
  name: string;
  /** Absolute path of the bundle (index.mjs, as NodejsFunction names it for ESM). */
  file: string;
  bytes: number;
  gzipBytes: number;
  metafile: Metafile;
  sha256: string;
}

/**
 * `ours: false` builds a baseline: the stack's options without our own aliases
 * (the environment-only credentials), i.e. what NodejsFunction gives a team by default.
 */
export async function bundleFunction(options: {
  name: string;
  entry: string;
  projectRoot: string;
  outDir: string;
  ours: boolean;
}): Promise<BuiltBundle> {
  const dir = join(options.outDir, options.name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'index.mjs');
  const result = await build({
    ...lambdaBundleOptions,
    alias: options.ours ? lambdaBundleOptions.alias : {},
    mainFields: [...lambdaBundleOptions.mainFields],
    external: [...lambdaBundleOptions.external],
    entryPoints: [join(options.projectRoot, options.entry)],
    outfile: file,
    absWorkingDir: options.projectRoot,
    metafile: true,
    logLevel: 'error',
  });
  const code = readFileSync(file);
  return {
    name: options.name,
    file,
    bytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    metafile: result.metafile,
    sha256: createHash('sha256').update(code).digest('hex'),
  };
}

/** The bytes of each package in a bundle's output, largest first (from the esbuild metafile). */
export function bytesByPackage(metafile: Metafile): { name: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = packageOf(input);
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

function packageOf(input: string): string {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return `(ours) ${parts.slice(0, 1).join('/')}/`;
  const scope = parts[at + 1] ?? '';
  return scope.startsWith('@') ? `${scope}/${parts[at + 2] ?? ''}` : scope;
}

/** Hashes of the cdk.out Lambda assets, if a synthesized cdk.out is present. */
export function cdkOutAssetHashes(projectRoot: string): Map<string, string> {
  const hashes = new Map<string, string>();
  const cdkOut = join(projectRoot, 'cdk.out');
  let entries: string[] = [];
  try {
    entries = readdirSync(cdkOut);
  } catch {
    return hashes;
  }
  for (const entry of entries) {
    const file = join(cdkOut, entry, 'index.mjs');
    try {
      if (!statSync(file).isFile()) continue;
    } catch {
      continue;
    }
    hashes.set(createHash('sha256').update(readFileSync(file)).digest('hex'), relative(projectRoot, file));
  }
  return hashes;
}
