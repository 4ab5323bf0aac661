/**
 * `npm run lint` is what stops an import that crosses a layer, an unused import
 * or a focused test: these tests run Biome with the project's biome.json on a
 * throwaway tree of small files, each placed where the rule it tests applies,
 * and check which rule each file breaks.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const projectRoot = path.resolve(__dirname, '../..');
const biome = path.join(projectRoot, 'node_modules', '.bin', 'biome');

/** Each fixture: where it lives, what it contains. */
const fixtures: Record<string, string> = {
  'functions/domain/imports-data.ts': "import { PetRepository } from '../data/pet-repository';\nexport const a = PetRepository;\n",
  'functions/domain/imports-data-from-afar.ts':
    "import { PetRepository } from '../../functions/data/pet-repository';\nexport const a = PetRepository;\n",
  'functions/domain/imports-http.ts': "import { header } from '../http/request';\nexport const a = header;\n",
  'functions/domain/imports-middy.ts': "import middy from '@middy/core';\nexport const a = middy;\n",
  'functions/domain/imports-lambda-types.ts': "import type { Context } from 'aws-lambda';\nexport type A = Context;\n",
  // A later override replaces an earlier one's options: domain/ must repeat the rules of functions/.
  'functions/domain/imports-lib.ts': "import { stages } from '../../lib/stage-config';\nexport const a = stages;\n",
  'functions/domain/allowed.ts':
    "import type { PlanLimits } from '../../definitions/plans';\nimport { ApiError } from './errors';\nexport type A = PlanLimits;\nexport const b = ApiError;\n",
  'functions/http/imports-lib.ts': "import { stages } from '../../lib/stage-config';\nexport const a = stages;\n",
  'functions/http/imports-local.ts': "import { startLocalApi } from '../../local/local-api';\nexport const a = startLocalApi;\n",
  'functions/http/imports-data.ts': "import { PetRepository } from '../data/pet-repository';\nexport const a = PetRepository;\n",
  'functions/data/imports-walk.ts': "import { walkPage } from '../domain/pet-walk';\nexport const a = walkPage;\n",
  'functions/data/imports-views.ts': "import { ListViews } from '../domain/list-views';\nexport const a = ListViews;\n",
  'functions/data/imports-lib.ts': "import { stages } from '../../lib/stage-config';\nexport const a = stages;\n",
  'functions/data/allowed.ts':
    "import type { BlockQueries } from '../domain/list-ports';\nimport { ApiError } from '../domain/errors';\nexport type A = BlockQueries;\nexport const b = ApiError;\n",
  'definitions/imports-domain.ts': "import { newPetSchema } from '../functions/domain/pet';\nexport const a = newPetSchema;\n",
  'definitions/operations/imports-http.ts': "import { header } from '../../functions/http/request';\nexport const a = header;\n",
  'definitions/imports-lib.ts': "import { stages } from '../lib/stage-config';\nexport const a = stages;\n",
  'definitions/operations/allowed.ts': "import { MAX_ID } from '../fields/pet-fields';\nexport const a = MAX_ID;\n",
  'lib/imports-handler.ts': "import { handler } from '../functions/get-pet/handler';\nexport const a = handler;\n",
  'lib/constructs/allowed.ts': "import { routes } from '../../definitions/routes';\nexport const a = routes;\n",
  'local/imports-lib.ts': "import { addPetStoreStacks } from '../lib/petstore-app';\nexport const a = addPetStoreStacks;\n",
  'local/imports-handler.ts': "import { handler } from '../functions/get-pet/handler';\nexport const a = handler;\n",
  'local/imports-handler-factory.ts':
    "import { createApiHandler } from '../functions/http/api-handler';\nexport const a = createApiHandler;\n",
  'local/imports-runtime.ts':
    "import { createDocumentClient } from '../functions/runtime/dependencies';\nexport const a = createDocumentClient;\n",
  'openapi/imports-handler.ts':
    "import { listPetsQuerySchema } from '../functions/list-pets/handler';\nexport const a = listPetsQuerySchema;\n",
  'openapi/allowed.ts': "import { newPetSchema } from '../definitions/fields/pet-fields';\nexport const a = newPetSchema;\n",
  'client/imports-functions.ts': "import { newPetSchema } from '../functions/domain/pet';\nexport const a = newPetSchema;\n",
  'admin/unused-import.ts': "import { plans } from '../definitions/plans';\nexport const a = 1;\n",
  'scripts/long-function.ts': `export function long(): number {\n  let total = 0;\n${'  total += 1;\n'.repeat(80)}  return total;\n}\n`,
  'functions/domain/long-function.ts': `export function long(): number {\n  let total = 0;\n${'  total += 1;\n'.repeat(40)}  return total;\n}\n`,
  'functions/data/short-function.ts': `export function short(): number {\n  let total = 0;\n${'  total += 1;\n'.repeat(30)}  return total;\n}\n`,
  'test/unit/long-test.test.ts': `it('may be long', () => {\n  let total = 0;\n${'  total += 1;\n'.repeat(80)}  expect(total).toBe(80);\n});\n`,
  'test/unit/focused.test.ts': "it.only('runs alone', () => {\n  expect(1).toBe(1);\n});\n",
  'test/unit/skipped.test.ts': "it.skip('never runs', () => {\n  expect(1).toBe(1);\n});\n",
};

let rulesBroken: Record<string, string[]>;

beforeAll(() => {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-lint-'));
  try {
    fs.copyFileSync(path.join(projectRoot, 'biome.json'), path.join(tree, 'biome.json'));
    // biome.json reads the ignore list from git: the tree must be a repository.
    spawnSync('git', ['init', '--quiet'], { cwd: tree });
    for (const [file, content] of Object.entries(fixtures)) {
      fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
      fs.writeFileSync(path.join(tree, file), content);
    }
    const run = spawnSync(biome, ['lint', '--colors=off', '--max-diagnostics=none', '.'], { cwd: tree, encoding: 'utf8' });
    // A diagnostic's first line reads "<file>:<line>:<column> lint/<group>/<rule> …".
    rulesBroken = Object.fromEntries(Object.keys(fixtures).map((file) => [file, [] as string[]]));
    for (const match of `${run.stdout}${run.stderr}`.matchAll(/^(\S+):\d+:\d+ lint\/\w+\/(\w+)/gm)) {
      rulesBroken[match[1]!]?.push(match[2]!);
    }
  } finally {
    fs.rmSync(tree, { recursive: true, force: true });
  }
});

it.each([
  ['definitions/imports-domain.ts'],
  ['definitions/operations/imports-http.ts'],
  ['definitions/imports-lib.ts'],
  ['functions/domain/imports-data.ts'],
  ['functions/domain/imports-data-from-afar.ts'],
  ['functions/domain/imports-http.ts'],
  ['functions/domain/imports-middy.ts'],
  ['functions/domain/imports-lambda-types.ts'],
  ['functions/domain/imports-lib.ts'],
  ['functions/http/imports-lib.ts'],
  ['functions/http/imports-local.ts'],
  ['functions/data/imports-walk.ts'],
  ['functions/data/imports-views.ts'],
  ['functions/data/imports-lib.ts'],
  ['lib/imports-handler.ts'],
  ['local/imports-lib.ts'],
  ['local/imports-handler.ts'],
  ['local/imports-handler-factory.ts'],
  ['openapi/imports-handler.ts'],
  ['client/imports-functions.ts'],
])('refuses the import that crosses a layer in %s', (file) => {
  expect(rulesBroken[file]).toEqual(['noRestrictedImports']);
});

it.each([
  ['definitions/operations/allowed.ts'],
  ['functions/domain/allowed.ts'],
  ['functions/data/allowed.ts'],
  ['lib/constructs/allowed.ts'],
  ['openapi/allowed.ts'],
  // The rules are about these layers only: http/ may use data/; local/ serves the bundles and may use the runtime's client.
  ['functions/http/imports-data.ts'],
  ['local/imports-runtime.ts'],
  ['test/unit/long-test.test.ts'],
  ['functions/data/short-function.ts'],
])('lets %s be', (file) => {
  expect(rulesBroken[file]).toEqual([]);
});

it('refuses an unused import', () => {
  expect(rulesBroken['admin/unused-import.ts']).toEqual(['noUnusedImports']);
});

it('refuses a function of more than 80 lines outside the tests', () => {
  expect(rulesBroken['scripts/long-function.ts']).toEqual(['noExcessiveLinesPerFunction']);
});

it('refuses a function of more than 40 lines in functions/, where every request runs (its domain overrides keep the limit)', () => {
  expect(rulesBroken['functions/domain/long-function.ts']).toEqual(['noExcessiveLinesPerFunction']);
});

it('refuses focused and skipped tests', () => {
  expect(rulesBroken['test/unit/focused.test.ts']).toEqual(['noFocusedTests']);
  expect(rulesBroken['test/unit/skipped.test.ts']).toEqual(['noSkippedTests']);
});
