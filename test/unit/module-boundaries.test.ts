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

/** Tests and benchmarks measure the limiter's parts: they may use its test entry. */
const measuresTheLimiter = (file: string) => file.startsWith('test/') || file.startsWith('bench/');

it('outside functions/rate-limit/, every import of the limiter names its index (tests and benchmarks: or its test entry)', () => {
  const intoTheModule = sources
    .filter((file) => !file.startsWith('functions/rate-limit/'))
    .flatMap((file) => importsOf(file).map((target) => ({ file, target })))
    .filter(({ target }) => target.startsWith('functions/rate-limit/') && target !== 'functions/rate-limit/index')
    .filter(({ file, target }) => !(measuresTheLimiter(file) && target === 'functions/rate-limit/testing'));
  expect(intoTheModule).toEqual([]);
  // The rule can fail: the module's own files do import each other.
  expect(importsOf('functions/rate-limit/index.ts')).toContain('functions/rate-limit/limiter');
});

it('functions/domain/ and functions/data/ hold nothing of the limiter', () => {
  const limiterWords = /\b(lease|RateLimiter|CounterStore|suspendedUntil|refusedAtGateway)\b/;
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
  expect(names).toContain('RequestLimiter');
  expect(names.length).toBeLessThanOrEqual(10);
});

it('outside functions/rate-limit/, no code names an attribute of the counter item (the key tool, scripts and the functions go through the door)', () => {
  const counters = readFileSync(join(root, 'functions/rate-limit/counter-table.ts'), 'utf8');
  const item = /interface CounterItem \{([\s\S]*?)\n\}/.exec(counters)?.[1] ?? '';
  // Words other records use too (a day, a key id, a TTL): not the counter item's own.
  const shared = new Set(['day', 'spare', 'leases', 'minuteStart']);
  const attributes = [...item.matchAll(/^\s+(\w+)\?:/gm)].map((match) => match[1] as string).filter((name) => !shared.has(name));
  attributes.push('keyRevoked', 'keyExpiresAt');
  expect(attributes).toEqual(expect.arrayContaining(['dayGranted', 'minuteGranted', 'bannedUntil', 'keyPerMinute']));
  const naming = new RegExp(`\\b(${attributes.join('|')})\\b`);
  const outside = sources.filter((file) => !file.startsWith('functions/rate-limit/') && !measuresTheLimiter(file));
  expect(outside.filter((file) => naming.test(readFileSync(join(root, file), 'utf8')))).toEqual([]);
});
