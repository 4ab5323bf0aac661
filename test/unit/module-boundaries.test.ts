import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The rate limiter is one module (issue 36): anything outside
 * functions/rate-limit/ reaches it through its index alone, and the domain and
 * data layers hold nothing of it. Read from the imports of every tracked file.
 */
const root = join(__dirname, '..', '..');
const sources = execFileSync('git', ['ls-files', '*.ts', '*.mjs'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

/** The project-relative targets of a file's relative imports. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s+'(\.[^']+)'/g)].map((match) =>
    relative(root, normalize(join(dirname(join(root, file)), match[1] as string))),
  );
}

/** Tests and benchmarks may use the few names of the limiter's test support beside its door. */
const measuresTheLimiter = (file: string) => file.startsWith('test/') || file.startsWith('bench/');
/** The limiter's own tests of its pure rules (window arithmetic, lease sizing, the gateway's share of a ban) read its files. */
const limiterRuleTests = ['test/unit/rate-limit.test.ts', 'test/unit/gateway-refusal.test.ts'];

it('outside functions/rate-limit/, every import of the limiter names its index (tests and benchmarks: or its test support; its rule tests: its files)', () => {
  const intoTheModule = sources
    .filter((file) => !file.startsWith('functions/rate-limit/') && !limiterRuleTests.includes(file))
    .flatMap((file) => importsOf(file).map((target) => ({ file, target })))
    .filter(({ target }) => target.startsWith('functions/rate-limit/') && target !== 'functions/rate-limit/index')
    .filter(({ file, target }) => !(measuresTheLimiter(file) && target === 'functions/rate-limit/testing'));
  expect(intoTheModule).toEqual([]);
  // The rule can fail: the module's own files do import each other.
  expect(importsOf('functions/rate-limit/index.ts')).toContain('functions/rate-limit/limiter');
});

it("the limiter's test support is a few names: what tests need beyond the door is the counter item's key, its windows and shapes", () => {
  const text = readFileSync(join(root, 'functions/rate-limit/testing.ts'), 'utf8');
  const names = [...text.matchAll(/^export (?:type )?\{([^}]+)\}/gm)].flatMap((match) =>
    (match[1] as string).split(',').map((name) => name.trim()),
  );
  expect(names).toContain('counterKey');
  expect(text).not.toMatch(/export \*/);
  expect(names.length).toBeLessThanOrEqual(6);
});

it('functions/domain/ and functions/data/ hold nothing of the limiter', () => {
  const limiterWords = /\b(lease|RateLimiter|CounterStore|bannedUntil|refusedAtGateway)\b/;
  const layers = sources.filter((file) => file.startsWith('functions/domain/') || file.startsWith('functions/data/'));
  expect(layers.length).toBeGreaterThan(10);
  expect(layers.filter((file) => /rate-limit|allowance|suspension|gateway-refusal/.test(file))).toEqual([]);
  expect(layers.filter((file) => limiterWords.test(readFileSync(join(root, file), 'utf8')))).toEqual([]);
});

it('functions/rate-limit/index.ts, the door, exports at most 10 names', () => {
  const text = readFileSync(join(root, 'functions/rate-limit/index.ts'), 'utf8');
  const declared = [...text.matchAll(/^export (?:class|interface|function|const|type) (\w+)/gm)].map((match) => match[1]);
  const reexported = [...text.matchAll(/^export (?:type )?\{([^}]+)\}/gm)].flatMap((match) =>
    (match[1] as string).split(',').map((name) => name.trim().replace(/^type /, '')),
  );
  const names = [...declared, ...reexported];
  expect(names).toContain('RateLimiter');
  expect(names.length).toBeLessThanOrEqual(10);
});

it('outside functions/rate-limit/, no code names an attribute of the counter item (the key tool, scripts and the functions go through the door)', () => {
  const counters = readFileSync(join(root, 'functions/rate-limit/counter-table.ts'), 'utf8');
  const item = /interface CounterItem \{([\s\S]*?)\n\}/.exec(counters)?.[1] ?? '';
  // Words other records use too (a day, a key id, a TTL), and the door's own concepts the item stores under their
  // one name (the ban's end, the last served request: DayUsage, BanCheck): not the counter item's own.
  const shared = new Set(['day', 'spare', 'leases', 'minuteStart', 'bannedUntil', 'lastServedAt']);
  const attributes = [...item.matchAll(/^\s+(\w+)\?:/gm)].map((match) => match[1] as string).filter((name) => !shared.has(name));
  attributes.push('keyRevoked', 'keyExpiresAt');
  expect(attributes).toEqual(expect.arrayContaining(['dayGranted', 'minuteGranted', 'customerPerMinute']));
  const naming = new RegExp(`\\b(${attributes.join('|')})\\b`);
  const outside = sources.filter((file) => !file.startsWith('functions/rate-limit/') && !measuresTheLimiter(file));
  expect(outside.filter((file) => naming.test(readFileSync(join(root, file), 'utf8')))).toEqual([]);
});

/**
 * The customer and its secrets have one owner, functions/customers/ (decision
 * 16): everything else goes through its door (index.ts), and only it reads or
 * writes the key table. Product code is what ships or operates: the functions,
 * the key tool, npm start, the scripts and the benchmarks' measures (tests and
 * the hand-written baselines of bench/baselines/ are measured against it).
 */
const customerModule = 'functions/customers/';
const isProduct = (file: string) =>
  /^(functions|admin|local|scripts|bench)\//.test(file) && !file.startsWith('bench/baselines/') && !file.startsWith(customerModule);

/** Files outside the module whose imports reach past its door. */
function pastTheCustomerDoor(files: { file: string; imports: string[] }[]): string[] {
  return files
    .filter(({ file }) => !file.startsWith(customerModule))
    .filter(({ imports }) => imports.some((target) => target.startsWith(customerModule) && target !== `${customerModule}index`))
    .map(({ file }) => file);
}

/** Product files outside the module that name the key table (its name is how a DynamoDB call reaches it). */
function namingTheKeyTable(files: { file: string; text: string }[]): string[] {
  return files.filter(({ file, text }) => isProduct(file) && /[tT]ableNames\.apiKeys\b/.test(text)).map(({ file }) => file);
}

/** Classes outside the module that extend one the module defines. */
function extendingCustomerClasses(files: { file: string; text: string }[], moduleClasses: string[]): string[] {
  const extending = new RegExp(`\\bextends (${moduleClasses.join('|')})\\b`);
  return files.filter(({ file, text }) => !file.startsWith(customerModule) && extending.test(text)).map(({ file }) => file);
}

/** The product functions that turn a plan into limits, and the product files outside their own that call limitsOf. */
function limitsFunctions(files: { file: string; text: string }[]): { computing: string[]; callers: string[] } {
  const product = files.filter(({ file }) => isProduct(file) || file.startsWith(customerModule) || file.startsWith('definitions/'));
  const computing = product.flatMap(({ file, text }) =>
    [...text.matchAll(/function (\w+)\([^)]*\)\s*:\s*PlanLimits\b/g)].map((match) => `${file}:${match[1]}`),
  );
  const callers = product
    .filter(({ file, text }) => file !== `${customerModule}customer.ts` && /\blimitsOf\(/.test(text))
    .map(({ file }) => file);
  return { computing, callers };
}

describe('the customer has one owner, functions/customers/ (decision 16)', () => {
  // This file's own examples of what the rules find are not code.
  const files = sources
    .filter((file) => file !== 'test/unit/module-boundaries.test.ts')
    .map((file) => ({ file, text: readFileSync(join(root, file), 'utf8'), imports: importsOf(file) }));
  const moduleClasses = files
    .filter(({ file }) => file.startsWith(customerModule))
    .flatMap(({ text }) => [...text.matchAll(/^export class (\w+)/gm)].map((match) => match[1] as string));

  it('outside it, every import of the module names its door, and no product code names the key table', () => {
    expect(pastTheCustomerDoor(files)).toEqual([]);
    expect(namingTheKeyTable(files)).toEqual([]);
    // The rules can fail: a file that reaches past the door, or names the table, is found.
    expect(pastTheCustomerDoor([{ file: 'admin/x.ts', imports: ['functions/customers/customer-table'] }])).toEqual(['admin/x.ts']);
    expect(namingTheKeyTable([{ file: 'admin/x.ts', text: 'new GetCommand({ TableName: tableNames.apiKeys })' }])).toEqual(['admin/x.ts']);
  });

  it('no class outside it extends one of its classes', () => {
    expect(moduleClasses).toEqual(expect.arrayContaining(['CustomerTable', 'ApiKeyChangedError']));
    expect(extendingCustomerClasses(files, moduleClasses)).toEqual([]);
    expect(extendingCustomerClasses([{ file: 'admin/x.ts', text: 'class KeyTable extends CustomerTable {}' }], moduleClasses)).toEqual([
      'admin/x.ts',
    ]);
  });

  it("a customer's limits are computed by one function, limitsOf, called from at most 2 files besides its own", () => {
    const { computing, callers } = limitsFunctions(files);
    expect(computing).toEqual(['functions/customers/customer.ts:limitsOf']);
    expect(callers.length).toBeLessThanOrEqual(2);
    const twice = limitsFunctions([
      ...files,
      { file: 'admin/x.ts', text: 'function limitsFor(plan: PlanName): PlanLimits {}', imports: [] },
    ]);
    expect(twice.computing).toHaveLength(2);
  });
});
