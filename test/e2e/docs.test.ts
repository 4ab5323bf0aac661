import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { routes } from '../../definitions/routes';
import { projectRoot } from '../../openapi/contract-files';

/**
 * `npm run docs` builds a static HTML reference page from the OpenAPI document
 * (Redocly build-docs, Redoc inlined: no network needed to view it). Built here
 * with the very command of package.json into a temporary folder, then opened in
 * headless Chromium (Debian's package, driven by playwright-core), offline.
 */
const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = 'docs/api-reference.html';
const outputDir = mkdtempSync(join(tmpdir(), 'petstore-docs-'));
const page = join(outputDir, 'index.html');
let browser: Browser;

beforeAll(async () => {
  const script = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.docs ?? '';
  expect(script).toContain(OUTPUT);
  const run = spawnSync('sh', ['-c', script.replace(OUTPUT, JSON.stringify(page))], {
    cwd: projectRoot,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${join(projectRoot, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` },
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`npm run docs failed:\n${run.stdout}\n${run.stderr}`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  rmSync(outputDir, { recursive: true, force: true });
});

/** Opens the page at a fragment, offline: any request that would leave the file is refused and recorded. */
async function open(fragment = ''): Promise<{ page: Page; errors: string[]; outside: string[] }> {
  const tab = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors: string[] = [];
  const outside: string[] = [];
  tab.on('pageerror', (error) => errors.push(String(error)));
  await tab.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  await tab.goto(`${pathToFileURL(page).href}${fragment}`);
  return { page: tab, errors, outside };
}

it('is one self-contained HTML file', () => {
  const html = readFileSync(page, 'utf8');
  expect(html).not.toMatch(/<script[^>]+src=["']https?:/);
});

it.each(routes.map((route) => [route.operationId, route]))('renders the operation %s with its summary, method and path', async (_, route) => {
  const { page: tab, errors } = await open(`#/pets/${route.operationId.toLowerCase()}`);
  const section = sectionOf(tab, route.operationId);
  await section.getByText(route.summary).first().waitFor({ timeout: 20_000 });
  const text = await section.innerText();
  expect(text).toContain(route.method);
  expect(text).toContain(route.path);
  expect(errors).toEqual([]);
  await tab.close();
});

it('renders the deprecation notice of getPet, with its sunset', async () => {
  const { page: tab, errors } = await open('#/pets/getpet');
  const section = sectionOf(tab, 'getPet');
  await section.getByText('Deprecated', { exact: true }).first().waitFor({ timeout: 20_000 });
  const text = await section.innerText();
  expect(text).toContain('Get one pet by id');
  expect(text).toContain('removed on 2030-12-05');
  expect(text).toContain('Thu, 05 Dec 2030 00:00:00 GMT');
  expect(text).toMatch(/Deprecation\s/);
  expect(errors).toEqual([]);
  await tab.close();
});

it('shows the parameters and headers of listPets and the Idempotency-Key of createPet', async () => {
  for (const [operationId, expected] of [
    ['listPets', ['limit', 'status', 'cursor', 'X-RateLimit-Remaining', 'Link']],
    ['createPet', ['Idempotency-Key', 'X-RateLimit-Limit']],
  ] as const) {
    const { page: tab } = await open(`#/pets/${operationId.toLowerCase()}`);
    const section = sectionOf(tab, operationId);
    await section.getByText(expected[0], { exact: true }).first().waitFor({ timeout: 20_000 });
    const text = await section.innerText();
    for (const name of expected) expect(text).toContain(name);
    await tab.close();
  }
});

function sectionOf(tab: Page, operationId: string) {
  return tab.locator(`[data-section-id="/pets/${operationId.toLowerCase()}"]`);
}
