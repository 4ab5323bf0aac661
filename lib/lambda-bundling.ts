/**
 * How every Lambda function is bundled (NodejsFunction's `bundling`, run with
 * the local esbuild). Plain values with no CDK import, so that the benchmark
 * (bench/) builds exactly the bundles the stack deploys.
 */
/**
 * The Node.js major the functions run on in Lambda (nodejs24.x, supported to
 * 2028-04-30). The esbuild target, the Node.js pinned in package.json for tests
 * and `npm start`, and .nvmrc all follow it; test/unit/node-version-parity.test.ts
 * fails when one of them, or the Node.js running the tests, differs.
 */
export const lambdaNodeMajor = 24;

export const lambdaBundling = {
  format: 'esm',
  /** Matches the functions' runtime (Runtime.NODEJS_24_X in lib/constructs/operation-function.ts). */
  target: `node${lambdaNodeMajor}`,
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
