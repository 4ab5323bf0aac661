/**
 * How every Lambda function is built and what it runs with: one source for the
 * CDK stack (lib/constructs/operation-function.ts, through NodejsFunction), the
 * local runtime of `npm start` and the end-to-end tests (local/function-bundles.ts),
 * and the benchmark. Plain values with no CDK import.
 */
import type { BuildOptions } from 'esbuild';
import { businessMetrics } from './metrics';

/**
 * The Node.js major the functions run on in Lambda (nodejs24.x, supported to
 * 2028-04-30). The esbuild target, the Node.js pinned in package.json for tests
 * and `npm start`, and .nvmrc all follow it; test/unit/node-version-parity.test.ts
 * fails when one of them, or the Node.js running the tests, differs.
 */
export const lambdaNodeMajor = 24;

/** The functions' memory (MB); Lambda also tells the function through AWS_LAMBDA_FUNCTION_MEMORY_SIZE. */
export const lambdaMemoryMb = 512;

/** NodejsFunction's `bundling` props, run with the local esbuild. */
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

/**
 * The same values as esbuild's build options, as NodejsFunction turns them into
 * esbuild arguments: `--bundle --platform=node --target=node24 --format=esm
 * --minify --sourcemap --sources-content=false --main-fields=module,main
 * --banner:js=… --alias:…`, no externals (the AWS SDK is bundled). Run from the
 * project root (absWorkingDir) so that esbuild finds the same tsconfig.json.
 * The output file is `index.mjs`, as NodejsFunction names it for ESM, and the
 * function's handler is `index.handler`.
 */
export const lambdaEsbuildOptions = {
  bundle: true,
  platform: 'node',
  target: lambdaBundling.target,
  format: lambdaBundling.format,
  minify: lambdaBundling.minify,
  sourcemap: lambdaBundling.sourceMap,
  sourcesContent: lambdaBundling.sourcesContent,
  mainFields: [...lambdaBundling.mainFields],
  external: [...lambdaBundling.externalModules],
  banner: { js: lambdaBundling.banner },
  alias: aliasesOf(lambdaBundling.esbuildArgs['--alias']),
} satisfies BuildOptions;

/** esbuild's `--alias:<package>=<path>` argument (as NodejsFunction passes it) as the API's `alias` option. */
function aliasesOf(argument: string): Record<string, string> {
  const [from, to] = argument.split('=') as [string, string];
  return { [from]: to };
}

/**
 * The environment the stack sets on every function, besides the names of the
 * tables it may use (tables[name].envVar, one per table its access names).
 */
export const lambdaEnvironment = {
  // Stack traces through the source maps of the minified bundle.
  NODE_OPTIONS: '--enable-source-maps',
  // The `service` dimension of the business metrics and the logs' service field.
  POWERTOOLS_SERVICE_NAME: businessMetrics.serviceName,
} as const;
