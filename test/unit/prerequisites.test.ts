import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromiumChoice } from '../support/prerequisites';

/** What npm test needs outside npm: Java only. The browser comes with npm ci, or CHROMIUM_PATH names one. */
const oneLineNaming = (...commands: string[]) =>
  expect.objectContaining({
    message: expect.stringMatching(
      new RegExp(`^[^\\n]*${commands.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*')}[^\\n]*$`),
    ),
  });

describe('Chromium', () => {
  it('takes CHROMIUM_PATH first, even where npm ci brought one', () => {
    expect(
      chromiumChoice(
        { CHROMIUM_PATH: '/opt/chrome/chrome' },
        (path) => path === '/opt/chrome/chrome' || path === '/usr/bin/chromium',
        'linux-x64',
      ),
    ).toEqual({ source: 'CHROMIUM_PATH', executable: '/opt/chrome/chrome' });
  });

  it('refuses a CHROMIUM_PATH that does not exist rather than taking another browser', () => {
    expect(() => chromiumChoice({ CHROMIUM_PATH: '/nowhere/chrome' }, (path) => path === '/usr/bin/chromium', 'linux-x64')).toThrow(
      /CHROMIUM_PATH=\/nowhere\/chrome/,
    );
  });

  it("takes the one npm ci installed on Linux x64, without looking at the system's browsers", () => {
    const looked: string[] = [];
    const exists = (path: string) => {
      looked.push(path);
      return true;
    };
    expect(chromiumChoice({}, exists, 'linux-x64')).toEqual({ source: 'npm' });
    expect(looked).toEqual([]);
  });

  it.each([['darwin-arm64'], ['linux-arm64']])(
    'on %s, where npm ci brings none, says in one line to set CHROMIUM_PATH and how to install one',
    (platform) => {
      let error: unknown;
      try {
        chromiumChoice({}, () => true, platform);
      } catch (caught) {
        error = caught;
      }
      expect(error).toEqual(
        oneLineNaming(platform, 'CHROMIUM_PATH', 'apt-get install -y chromium', 'Debian/Ubuntu', 'brew install --cask chromium', 'macOS'),
      );
    },
  );
});

describe('CI', () => {
  const script = readFileSync(join(__dirname, '..', '..', '.ci', 'run'), 'utf8');

  it('installs only Java from apt: the browser and the second validator come with npm ci', () => {
    const installed = [...script.matchAll(/apt-get install ([^|&;\n]+)/g)].flatMap(([, words = '']) =>
      words.split(/\s+/).filter((word) => word !== '' && !word.startsWith('-') && word !== '\\'),
    );
    expect(installed).toEqual(['openjdk-17-jre-headless']);
    expect(script).not.toMatch(/chromium|python/i);
  });
});
