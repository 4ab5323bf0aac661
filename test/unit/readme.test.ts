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
