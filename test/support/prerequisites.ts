import { existsSync } from 'node:fs';

/**
 * What `npm test` needs besides npm packages (README, "The two commands"): Java
 * 17+ (DynamoDB Local: local/dynamodb-local.ts says so itself), and nothing else.
 * The reference-page test's browser comes with `npm ci` (@sparticuz/chromium,
 * test/support/bundled-chromium.ts) on Linux x64, the platform that package
 * ships; CHROMIUM_PATH names another browser, and is the way elsewhere. The
 * system's browsers are never looked for: what runs is what npm ci installed,
 * or what CHROMIUM_PATH says. A missing one stops its test with one line saying what to do.
 */
export type ChromiumChoice = { source: 'CHROMIUM_PATH'; executable: string } | { source: 'npm' };

/** The platforms @sparticuz/chromium ships a build for (its package holds one x64 Linux binary). */
const BUNDLED_PLATFORMS = ['linux-x64'];

export function chromiumChoice(
  env: NodeJS.ProcessEnv = process.env,
  exists: (path: string) => boolean = existsSync,
  platform = `${process.platform}-${process.arch}`,
): ChromiumChoice {
  const chosen = env.CHROMIUM_PATH;
  if (chosen) {
    if (!exists(chosen)) throw new Error(`CHROMIUM_PATH=${chosen} does not exist: point it at a Chromium or Chrome executable.`);
    return { source: 'CHROMIUM_PATH', executable: chosen };
  }
  if (BUNDLED_PLATFORMS.includes(platform)) return { source: 'npm' };
  throw new Error(
    `npm ci brings a Chromium for Linux x64 only, not for ${platform}: set CHROMIUM_PATH to a Chromium or Chrome, e.g. after \`sudo apt-get install -y chromium\` (Debian/Ubuntu: /usr/bin/chromium) or \`brew install --cask chromium\` (macOS: /Applications/Chromium.app/Contents/MacOS/Chromium).`,
  );
}
