import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * What `npm test` needs besides npm packages (README, "The two commands"): Java
 * 17+ (DynamoDB Local: local/dynamodb-local.ts says so itself), Chromium for the
 * reference-page test, and Python 3 with jsonschema for the e2e schema checks.
 * Each one missing stops its tests with one line saying how to install it.
 */

/** CHROMIUM_PATH, else where Debian, Ubuntu, other Linux packages and macOS put a Chromium or Chrome. */
const chromiumCandidates = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

export function chromiumPath(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): string {
  const chosen = env.CHROMIUM_PATH;
  if (chosen) {
    if (!exists(chosen)) throw new Error(`CHROMIUM_PATH=${chosen} does not exist: point it at a Chromium or Chrome executable.`);
    return chosen;
  }
  const found = chromiumCandidates.find((candidate) => exists(candidate));
  if (!found) {
    throw new Error(
      'Chromium not found (or set CHROMIUM_PATH): install it with `sudo apt-get install -y chromium` (Debian/Ubuntu) or `brew install --cask chromium` (macOS).',
    );
  }
  return found;
}

/** `python3` on PATH may be an interpreter without jsonschema (e.g. a pyenv one): Debian's comes first. */
const pythonCandidates = ['/usr/bin/python3', 'python3'];

export function pythonWithJsonschema(
  env: NodeJS.ProcessEnv = process.env,
  hasJsonschema: (python: string) => boolean = (python) => spawnSync(python, ['-c', 'import jsonschema'], { stdio: 'ignore' }).status === 0,
): string {
  const candidates = env.PYTHON ? [env.PYTHON] : pythonCandidates;
  const found = candidates.find(hasJsonschema);
  if (!found) {
    throw new Error(
      `No Python 3 with jsonschema${env.PYTHON ? ` at PYTHON=${env.PYTHON}` : ''}: install it with \`sudo apt-get install -y python3-jsonschema\` (Debian/Ubuntu) or \`python3 -m pip install --user jsonschema\` (macOS).`,
    );
  }
  return found;
}
