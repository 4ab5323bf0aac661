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

it('outside functions/rate-limit/, every import of the limiter names its index', () => {
  const intoTheModule = sources
    .filter((file) => !file.startsWith('functions/rate-limit/'))
    .flatMap((file) => importsOf(file).map((target) => ({ file, target })))
    .filter(({ target }) => target.startsWith('functions/rate-limit/') && target !== 'functions/rate-limit/index');
  expect(intoTheModule).toEqual([]);
  // The rule can fail: the module's own files do import each other.
  expect(importsOf('functions/rate-limit/index.ts')).toContain('functions/rate-limit/limiter');
});

it('functions/domain/ and functions/data/ hold nothing of the limiter', () => {
  const limiterWords = /\b(lease|RateLimiter|RateCounters|suspendedUntil|refusedAtGateway)\b/;
  const layers = sources.filter((file) => file.startsWith('functions/domain/') || file.startsWith('functions/data/'));
  expect(layers.length).toBeGreaterThan(10);
  expect(layers.filter((file) => /rate-limit|allowance|suspension|gateway-refusal/.test(file))).toEqual([]);
  expect(layers.filter((file) => limiterWords.test(readFileSync(join(root, file), 'utf8')))).toEqual([]);
});
