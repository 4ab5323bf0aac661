import { spawnSync } from 'node:child_process';
import { operationContracts } from '../../definitions/operations';
import { createPetContract } from '../../definitions/operations/create-pet';
import { routes } from '../../definitions/routes';
import { projectRoot } from '../../openapi/contract-files';

/**
 * The generator reads the operation contracts (definitions/operations/), never a
 * handler: importing a handler builds an SDK client and reads the environment.
 */
it('builds the document without loading any handler, repository or runtime module', () => {
  const script = `require('./openapi/contract-files').renderDocument();
    console.log(JSON.stringify(Object.keys(require.cache).map((file) => require('node:path').relative(process.cwd(), file))));`;
  const run = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', script], {
    cwd: projectRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status).toBe(0);
  const loaded = JSON.parse(run.stdout.trim().split('\n').pop() ?? '[]') as string[];
  expect(loaded).toContain('definitions/operations/list-pets.ts');
  const projectFiles = loaded.filter((file) => !file.startsWith('node_modules'));
  expect(projectFiles.filter((file) => /^functions\/(?!domain\/)/.test(file))).toEqual([]);
});

it('has one contract per route, and a body limit for every operation that takes a body', () => {
  expect(Object.keys(operationContracts).sort()).toEqual(routes.map((route) => route.operationId).sort());
  for (const [operationId, contract] of Object.entries(operationContracts)) {
    expect(contract.operationId).toBe(operationId);
    if (contract.request.body) expect(contract.limits?.MAX_BODY_BYTES).toBeGreaterThan(0);
  }
  expect(createPetContract.limits.MAX_BODY_BYTES).toBe(16 * 1024);
});
