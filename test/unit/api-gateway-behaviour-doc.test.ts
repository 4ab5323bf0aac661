import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../lib/project-root';

/**
 * docs/api-gateway-behaviour.md: every row names its AWS source (or says AWS
 * does not document it), the local-gateway test that imitates it, and the
 * template assertion that configures it; every test it names exists.
 */
const document = readFileSync(join(projectRoot, 'docs', 'api-gateway-behaviour.md'), 'utf8');
const rows = document
  .split('\n')
  .filter((line) => line.startsWith('| ') && !line.startsWith('| Behaviour') && !line.startsWith('|---'))
  .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s\|$/g, '')));

const testSources = (['unit', 'integration', 'e2e', 'infra'] as const)
  .flatMap((folder) =>
    // Test files may sit in subfolders (test/unit/deployment-check/).
    readdirSync(join(projectRoot, 'test', folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(join(projectRoot, 'test', folder, file), 'utf8')),
  )
  .join('\n');

it('has a row for each behaviour the issue lists', () => {
  const text = rows.map((row) => row[0]).join('\n');
  for (const topic of [
    'MISSING_AUTHENTICATION_TOKEN',
    '401',
    'cached',
    '10 MB',
    '10,240 bytes',
    'HEAD',
    'Trailing slash',
    'queryStringParameters',
    'UTF-8',
    '29 s',
    'Gateway responses',
  ]) {
    expect(text).toContain(topic);
  }
});

it.each(rows.map((row) => [row[0]!.slice(0, 60), row]))('%s…: AWS source, local test and template assertion', (_name, row) => {
  expect(row).toHaveLength(4);
  const [, source, localTest, assertion] = row as [string, string, string, string];
  expect(/https:\/\/(docs\.aws\.amazon\.com|repost\.aws)\//.test(source) || /Not documented/.test(source)).toBe(true);
  expect(localTest.length).toBeGreaterThan(0);
  expect(assertion.length).toBeGreaterThan(0);
  // Every quoted test name is the start of a real test's name (up to any … or %s).
  const quoted = [...`${localTest} ${assertion}`.matchAll(/"([^"]+)"/g)].map((match) =>
    match[1]!
      .replace(/….*$/, '')
      .replace(/\(300 s\).*$/, '')
      .trim(),
  );
  expect(quoted.length).toBeGreaterThan(0);
  for (const name of quoted) {
    const fragment = name.replace(/^listPets: /, '').replace(/^Authorization: … /, '');
    expect(testSources).toContain(fragment);
  }
});
