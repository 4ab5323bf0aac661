import { routes } from '../../definitions/routes';
import { type BuiltBundle, bundleFunction, cdkOutAssetHashes } from '../support/bundling';
import { authorizerBundles, bundleEntries, bundleName, operations } from '../support/contenders';
import { formatRatio } from '../support/report';
import { type BenchRun, fmt } from '../support/run-context';

/** Builds every contender's bundle with the CDK stack's esbuild options. */
export async function buildBundles(
  projectRoot: string,
  outDir: string,
  progress: (message: string) => void,
): Promise<Map<string, BuiltBundle>> {
  const entries = bundleEntries();
  progress(`building ${entries.length} bundles with the CDK stack's esbuild options`);
  const bundles = new Map<string, BuiltBundle>();
  for (const [name, entry] of entries)
    bundles.set(name, await bundleFunction({ name, entry, projectRoot, outDir, ours: name.startsWith('ours-') }));
  return bundles;
}

/** Bundle sizes of ours against each baseline, and whether ours are the bytes `cdk synth` deploys. */
export function reportBundleSizes(run: BenchRun, projectRoot: string): void {
  const cell = (bundle: BuiltBundle) => `${fmt.bytes(bundle.bytes)} (${fmt.bytes(bundle.gzipBytes)})`;
  for (const op of operations) {
    const [ours, plain, express, floor] = (['ours', 'plain', 'express', 'floor'] as const).map((impl) =>
      run.bundle(bundleName(impl, op)),
    ) as [BuiltBundle, BuiltBundle, BuiltBundle, BuiltBundle];
    run.rows.push({
      measure: `Bundle ${op}, minified (gzip)`,
      ours: cell(ours),
      plain: cell(plain),
      express: cell(express),
      floor: cell(floor),
      ratio: `${formatRatio(ours.bytes / plain.bytes)} plain, ${formatRatio(ours.bytes / express.bytes)} Express`,
      target: '—',
      met: '',
    });
  }
  const ours = run.bundle(authorizerBundles.ours);
  const plain = run.bundle(authorizerBundles.plain);
  run.rows.push({
    measure: 'Bundle authorizer, minified (gzip)',
    ours: cell(ours),
    plain: cell(plain),
    express: '—',
    floor: '—',
    ratio: `${formatRatio(ours.bytes / plain.bytes)} plain`,
    target: '—',
    met: '',
  });

  const cdkAssets = cdkOutAssetHashes(projectRoot);
  const identical = routes.filter((route) => cdkAssets.has(run.bundle(bundleName('ours', route.operationId)).sha256));
  run.notes.push(
    identical.length === routes.length
      ? 'Our bundles are byte-identical to the Lambda assets of the last `cdk synth` (cdk.out).'
      : `${identical.length} of ${routes.length} of our bundles are byte-identical to a cdk.out asset (cdk.out is missing or older than the sources; the esbuild options are definitions/lambda-function.ts, as the stack's).`,
  );
}

/** The biggest packages in each bundle, for the notes of the results. */
export function bundleComposition(run: BenchRun, bytesByPackage: (bundle: BuiltBundle) => { name: string; bytes: number }[]): string[] {
  return bundleEntries().map(([name]) => {
    const bundle = run.bundle(name);
    const top = bytesByPackage(bundle).slice(0, 6);
    return `- ${name} (${fmt.bytes(bundle.bytes)}): ${top.map((entry) => `${entry.name} ${fmt.bytes(entry.bytes)}`).join(', ')}`;
  });
}
