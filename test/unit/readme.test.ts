import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCodes } from '../../definitions/error-codes';
import { plans } from '../../definitions/plans';
import { authorizer } from '../../definitions/routes';

/** docs/clients.md (linked from the README) documents the tables of definitions/; this keeps the two from drifting. */
const readme = readFileSync(join(__dirname, '..', '..', 'docs', 'clients.md'), 'utf8');

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
