import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { routes } from '../../definitions/routes';
import { projectRoot } from '../../openapi/contract-files';
import { bundledChromium } from '../support/bundled-chromium';
import { chromiumChoice } from '../support/prerequisites';

/**
 * `npm run docs` builds a static HTML reference page from the OpenAPI document
 * (Redocly build-docs, Redoc inlined; openapi/offline-page.ts inlines the one
 * remote image Redoc loads, its logo). Built here with the very command of
 * package.json into a temporary folder, then opened in headless Chromium
 * (the one npm ci installs, @sparticuz/chromium, unless CHROMIUM_PATH names another:
 * test/support/prerequisites.ts; driven by playwright-core), offline: any request that
 * would leave the file fails the test, and so does any image that fails to load.
 */
const OUTPUT = 'docs/api-reference.html';
const outputDir = mkdtempSync(join(tmpdir(), 'petstore-docs-'));
const page = join(outputDir, 'index.html');
let browser: Browser;
const choice = chromiumChoice();
const bundled = choice.source === 'npm' ? bundledChromium() : undefined;

beforeAll(async () => {
  const script =
    (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.docs ?? '';
  expect(script).toContain(OUTPUT);
  const run = spawnSync('sh', ['-c', script.replaceAll(OUTPUT, JSON.stringify(page))], {
    cwd: projectRoot,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${join(projectRoot, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` },
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`npm run docs failed:\n${run.stdout}\n${run.stderr}`);
  browser = await chromium.launch({
    executablePath: choice.source === 'npm' ? bundled?.executable : choice.executable,
    env: { ...process.env, ...bundled?.env },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
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

it('runs in the Chromium that npm ci installed, unless CHROMIUM_PATH names another', () => {
  // @sparticuz/chromium's major version is the major of the Chromium it ships.
  if (bundled) expect(browser.version().split('.')[0]).toBe(bundled.version.split('.')[0]);
  else expect(process.env.CHROMIUM_PATH).toBeTruthy();
});

it('is one self-contained HTML file: no remote script, stylesheet, font or image', () => {
  const html = readFileSync(page, 'utf8');
  expect(html).not.toMatch(/<script[^>]+src=["']https?:/);
  expect(html.match(/https?:\/\/[^\s"'`()<>]+\.(?:svg|png|jpe?g|gif|webp|ico|css|js|mjs|woff2?|ttf|otf)\b/g)).toBeNull();
});

it('loads every image, requests nothing outside the file, and renders every description as markdown', async () => {
  const { page: tab, errors, outside } = await open();
  await tab.getByText('requests per minute').first().waitFor({ timeout: 20_000 });
  // The attribution logo mounts after the first render: wait until every image has settled.
  // (Browser-side code as text: the project's TypeScript has no DOM types.)
  await tab.waitForFunction('document.images.length > 0 && [...document.images].every((image) => image.complete)', undefined, {
    timeout: 20_000,
  });
  const broken = await tab.evaluate(
    '[...document.images].filter((image) => image.naturalWidth === 0).map((image) => image.src.slice(0, 80))',
  );
  expect(broken).toEqual([]);
  expect(outside).toEqual([]);
  const text = await tab.locator('body').innerText();
  // Markdown left raw would show its syntax.
  expect(text).not.toContain('**');
  expect(text).not.toContain('`');
  expect(text).not.toMatch(/^#{1,3} /m);
  expect(await tab.locator('table').count()).toBeGreaterThanOrEqual(1); // the plans, from a markdown table
  expect(errors).toEqual([]);
  await tab.close();
});

it.each(routes.map((route) => [route.operationId, route]))(
  'shows a curl example and a @petstore/client example for %s',
  async (_, route) => {
    const { page: tab } = await open(`#/pets/${route.operationId.toLowerCase()}`);
    const section = sectionOf(tab, route.operationId);
    await section.getByText('curl', { exact: true }).first().waitFor({ timeout: 20_000 });
    expect(await section.innerText()).toContain('Authorization: Bearer $PET_STORE_API_KEY');
    // The samples' languages are a dropdown: curl first, then the client.
    await section.getByRole('button', { name: 'curl', exact: true }).first().click();
    await tab.getByRole('menuitem').filter({ hasText: '@petstore/client' }).first().click();
    await section.getByText("from '@petstore/client'").first().waitFor({ timeout: 10_000 });
    expect(await section.innerText()).toContain('new PetStoreClient(');
    await tab.close();
  },
);

it.each(routes.map((route) => [route.operationId, route]))(
  'renders the operation %s with its summary, method and path',
  async (_, route) => {
    const { page: tab, errors } = await open(`#/pets/${route.operationId.toLowerCase()}`);
    const section = sectionOf(tab, route.operationId);
    await section.getByText(route.summary).first().waitFor({ timeout: 20_000 });
    const text = await section.innerText();
    expect(text).toContain(route.method);
    expect(text).toContain(route.path);
    expect(errors).toEqual([]);
    await tab.close();
  },
);

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
