import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuiltBundle, bundleFunction } from '../../bench/support/bundling';
import { requests } from '../../bench/support/events';
import { tables } from '../../definitions/tables';
import { projectRoot } from '../../lib/project-root';
import { restProxyEvent } from '../support/api-gateway-events';
import { createTestTables, testEndpoint } from '../support/dynamo';

/**
 * The getPet function bundled exactly as the stack bundles it (definitions/lambda-function.ts),
 * run in a fresh node process against DynamoDB Local: it signs with the
 * credentials Lambda puts in the environment, and carries none of the SDK's
 * other credential sources (so nothing else can be found when they are missing).
 */
const run = promisify(execFile);
const workDir = mkdtempSync(join(tmpdir(), 'petstore-bundle-'));
let bundle: BuiltBundle;
let tableEnvironment: Record<string, string>;

beforeAll(async () => {
  bundle = await bundleFunction({ name: 'getPet', entry: 'functions/get-pet/handler.ts', projectRoot, outDir: workDir, ours: true });
  const names = await createTestTables();
  tableEnvironment = Object.fromEntries(Object.entries(tables).map(([name, table]) => [table.envVar, names[name as keyof typeof names]]));
  // As the Lambda runtime does: import the ESM bundle, invoke its handler once.
  writeFileSync(
    join(workDir, 'invoke.mjs'),
    `const { handler } = await import(process.argv[2]);
const result = await handler(JSON.parse(process.argv[3]), { awsRequestId: 'test', functionName: 'getPet', getRemainingTimeInMillis: () => 10000 });
process.stdout.write('\\n' + JSON.stringify({ statusCode: result.statusCode, body: JSON.parse(result.body) }) + '\\n');
process.exit(0);`,
  );
}, 60_000);
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

async function invokeGetPet(credentials: Record<string, string>): Promise<{ statusCode: number; body: { code?: string } }> {
  const event = restProxyEvent(requests.getPet('key_bundle_test', 424242));
  const { stdout } = await run(process.execPath, [join(workDir, 'invoke.mjs'), bundle.file, JSON.stringify(event)], {
    // No HOME with ~/.aws, no profile: only what is given here.
    env: {
      PATH: process.env.PATH,
      HOME: workDir,
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_DYNAMODB: testEndpoint(),
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...tableEnvironment,
      ...credentials,
    },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}

it('leaves the SDK credential chain out of the bundle and resolves credentials from the environment instead', () => {
  const inputs = Object.keys(bundle.metafile.inputs);
  expect(
    inputs.filter((input) =>
      /@aws-sdk\/(credential-provider-node|credential-provider-ini|credential-provider-sso|nested-clients)\//.test(input),
    ),
  ).toEqual([]);
  expect(inputs).toContain('functions/runtime/environment-credentials.ts');
});

it('reaches DynamoDB with the credentials Lambda puts in the environment', async () => {
  const result = await invokeGetPet({ AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_SESSION_TOKEN: 'local' });
  // DynamoDB answered: the limiter counted the request and the pet is not there.
  expect(result).toEqual({ statusCode: 404, body: expect.objectContaining({ code: 'not_found' }) });
});

it('answers 503, never a hang or a 500, when the environment holds no credentials', async () => {
  const result = await invokeGetPet({});
  expect(result).toEqual({ statusCode: 503, body: expect.objectContaining({ code: 'service_unavailable' }) });
});
