import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCodes } from '../../definitions/error-codes';
import { idempotencyKeySchema } from '../../definitions/operations/create-pet';
import { plans } from '../../definitions/plans';
import { authorizer } from '../../definitions/routes';
import { petLayout } from '../../functions/domain/id-blocks';
import { MAX_BLOCKS_PER_PAGE } from '../../functions/domain/pet-walk';

/**
 * docs/clients.md (linked from the README) and docs/operators.md state facts whose
 * single source is code: the tables of definitions/, the id block size, the
 * Idempotency-Key rule, what the key tool prints. This keeps them from drifting.
 */
const projectRoot = join(__dirname, '..', '..');
const readme = readFileSync(join(projectRoot, 'docs', 'clients.md'), 'utf8');
const operators = readFileSync(join(projectRoot, 'docs', 'operators.md'), 'utf8');

/** A section of a markdown document: its heading's line up to the next heading of level 2 or 3. */
function sectionLines(document: string, heading: string): string[] {
  const lines = document.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const end = lines.findIndex((line, index) => index > start && /^#{2,3} /.test(line));
  return lines.slice(start, end < 0 ? undefined : end);
}

it('lists every error code with its status', () => {
  for (const [code, { status }] of Object.entries(errorCodes)) {
    expect(readme).toContain(`| \`${code}\` | ${status} |`);
  }
});

it('states every fixed plan limit and the authorizer cache TTL', () => {
  for (const { displayName, limits } of Object.values(plans)) {
    if (limits === 'custom') continue;
    expect(readme).toContain(`| ${displayName} | ${limits.perMinute.toLocaleString('en-US')} | ${limits.perDay.toLocaleString('en-US')} |`);
  }
  expect(readme).toContain(`**${authorizer.resultsCacheTtlSeconds} seconds**`);
});

it("the README's prerequisites table lists npm and Java, nothing else (the browser and the second validator come with npm ci)", () => {
  const readmeFile = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const table = readmeFile.slice(readmeFile.indexOf('What they need besides npm:')).split('\n\n')[1] ?? '';
  const prerequisites = table
    .split('\n')
    .slice(2)
    .map((row) => row.split('|')[1]?.trim());
  expect(prerequisites).toEqual(['npm (any Node.js to run `npm ci`)', 'Java 17 or newer']);
});

it('keeps "Plans and rate limits" to what a client sees and does: at most 60 lines', () => {
  const section = sectionLines(readme, '### Plans and rate limits');
  expect(section.length).toBeLessThanOrEqual(60);
  // How the limiter counts lives in docs/architecture.md.
  expect(section.join('\n')).not.toMatch(/\blease|give[- ]?back|sequence number/i);
});

it('gives the id block size and the blocks a page reads as the code has them', () => {
  const sizes = [...readme.matchAll(/blocks of (\d+)/g)].map((match) => Number(match[1]));
  expect(sizes.length).toBeGreaterThanOrEqual(2);
  expect(new Set(sizes)).toEqual(new Set([petLayout.blockSize]));
  expect(readme).toContain(`${MAX_BLOCKS_PER_PAGE} blocks of ${petLayout.blockSize}`);
});

it('states the Idempotency-Key rule the schema enforces: visible ASCII, U+0021–U+007E, no space', () => {
  expect(readme).toContain('1 to 255 visible ASCII characters');
  expect(readme).toContain('U+0021–U+007E');
  for (let code = 0; code < 0x300; code++) {
    const character = String.fromCodePoint(code);
    const visible = code >= 0x21 && code <= 0x7e;
    expect([code, idempotencyKeySchema.safeParse(`a${character}b`).success]).toEqual([code, visible]);
    // In quotes, `"` and `\` are refused too.
    expect([code, idempotencyKeySchema.safeParse(`"a${character}b"`).success]).toEqual([
      code,
      visible && character !== '"' && character !== '\\',
    ]);
  }
  expect(idempotencyKeySchema.safeParse('x'.repeat(255)).success).toBe(true);
  expect(idempotencyKeySchema.safeParse('x'.repeat(256)).success).toBe(false);
});

/** docs/operators.md, "When something is wrong": each message begins as the key tool prints it. */
it.each([
  ['issue', ['issue', '--plan', 'gold', '--owner', 'x'], 'gold'],
  ['list', ['list', '--plan', 'gold'], 'gold'],
  ['set-plan', ['set-plan', 'key_0000000000000000', 'platinum'], 'platinum'],
])("quotes the key tool's bad-plan message of %s as it prints it", (_command, args, bad) => {
  const run = spawnSync(process.execPath, [join(projectRoot, 'admin', 'petstore-keys.js'), ...args], {
    cwd: projectRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status).toBe(1);
  const printed = /^error: (.+?)\. Allowed choices are free, pro, business, enterprise\.\n$/.exec(run.stderr)?.[1];
  expect(printed).toBeDefined();
  expect(operators).toContain(`| \`${printed?.replace(`'${bad}'`, "'…'")}\``);
});
