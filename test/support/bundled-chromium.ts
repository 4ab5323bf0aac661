import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Chromium that `npm ci` installs: @sparticuz/chromium ships a headless
 * Chromium (chrome-headless-shell, Linux x64) inside its npm package, brotli
 * compressed, with the few libraries it needs beyond glibc (NSS, NSPR, expat:
 * its al2023 pack) and a font. Nothing is downloaded: the package's own
 * `executablePath()` and `inflate()` unpack its files.
 *
 * The package unpacks into the temporary folder (`/tmp/chromium`, shared by every
 * user and checkout of the machine, and reused whatever version put it there), so
 * it is run here in a child process whose TMPDIR is a folder of this checkout:
 * node_modules/.cache/<package>-<version>/, made under a temporary name and
 * renamed when complete, so that two test runs at once never use a half-written browser.
 */
export interface BundledChromium {
  executable: string;
  /** The browser's environment: its libraries and its font configuration, from the package. */
  env: Record<string, string>;
  /** The package's version; its major is the Chromium major it ships. */
  version: string;
}

const projectRoot = join(__dirname, '..', '..');
const PACKAGE = '@sparticuz/chromium';

// ESM only (and `import.meta`): run in a child Node, not through jest's CommonJS transform.
const UNPACK = `
import chromium, { inflate } from '${PACKAGE}';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
const bin = join(dirname(fileURLToPath(import.meta.resolve('${PACKAGE}'))), '..', 'bin');
const executable = await chromium.executablePath(bin);
await inflate(join(bin, 'al2023.tar.br'));
console.log(executable);
`;

export function bundledChromium(cacheRoot = join(projectRoot, 'node_modules', '.cache')): BundledChromium {
  const { version } = JSON.parse(readFileSync(join(projectRoot, 'node_modules', PACKAGE, 'package.json'), 'utf8')) as { version: string };
  const folder = join(cacheRoot, `sparticuz-chromium-${version}`);
  const found = {
    executable: join(folder, 'chromium'),
    env: { LD_LIBRARY_PATH: join(folder, 'al2023', 'lib'), FONTCONFIG_FILE: join(folder, 'fonts.conf') },
    version,
  };
  if (existsSync(found.executable)) return found;

  mkdirSync(cacheRoot, { recursive: true });
  const partial = mkdtempSync(`${folder}.partial-`);
  try {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', UNPACK], {
      cwd: projectRoot,
      env: { ...process.env, TMPDIR: partial },
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (run.status !== 0) throw new Error(`${PACKAGE} could not unpack its Chromium (${run.status}):\n${run.stderr}`);
    // The package's fonts.conf names /tmp/fonts (its place on Lambda): this one names the unpacked copy.
    writeFileSync(
      join(partial, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(folder, 'fonts', 'fonts')}</dir>\n  <cachedir>${join(folder, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    renameSync(partial, folder);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    // Another run finished first: its copy is complete (it was renamed into place whole).
    if (!existsSync(found.executable)) throw error;
  }
  return found;
}
