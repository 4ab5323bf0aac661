/**
 * How every Lambda function is bundled (NodejsFunction's `bundling`, run with
 * the local esbuild). Plain values with no CDK import, so that the benchmark
 * (bench/) builds exactly the bundles the stack deploys.
 */
export const lambdaBundling = {
  format: 'esm',
  /** Matches the functions' runtime, Node.js 22. */
  target: 'node22',
  minify: true,
  sourceMap: true,
  // Stack traces need the mappings only; leave the sources out of the bundle.
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // Bundle the AWS SDK too: a pinned, tree-shaken SDK instead of the runtime's.
  externalModules: [] as string[],
  // ESM bundles of CommonJS dependencies still call require().
  banner: "import { createRequire } from 'module';const require = createRequire(import.meta.url);",
  // Credentials from the environment, where Lambda puts the role's, instead of the SDK's whole
  // provider chain (about 135 KiB of SSO, profile, STS and metadata clients parsed at every cold start).
  esbuildArgs: { '--alias': '@aws-sdk/credential-provider-node=./functions/runtime/environment-credentials.ts' },
} as const;
