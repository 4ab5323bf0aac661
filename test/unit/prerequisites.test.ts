import { chromiumPath, pythonWithJsonschema } from '../support/prerequisites';

/** What npm test needs outside npm: found where it usually is, or one line saying how to install it. */
const oneLineNaming = (...commands: string[]) =>
  expect.objectContaining({
    message: expect.stringMatching(
      new RegExp(`^[^\\n]*${commands.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*')}[^\\n]*$`),
    ),
  });

describe('Chromium', () => {
  it('takes CHROMIUM_PATH first', () => {
    expect(
      chromiumPath({ CHROMIUM_PATH: '/opt/chrome/chrome' }, (path) => path === '/opt/chrome/chrome' || path === '/usr/bin/chromium'),
    ).toBe('/opt/chrome/chrome');
  });

  it('refuses a CHROMIUM_PATH that does not exist rather than taking another browser', () => {
    expect(() => chromiumPath({ CHROMIUM_PATH: '/nowhere/chrome' }, (path) => path === '/usr/bin/chromium')).toThrow(
      /CHROMIUM_PATH=\/nowhere\/chrome/,
    );
  });

  it.each([
    ['/usr/bin/chromium'],
    ['/usr/bin/chromium-browser'],
    ['/Applications/Chromium.app/Contents/MacOS/Chromium'],
    ['/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'],
  ])('finds %s', (installed) => {
    expect(chromiumPath({}, (path) => path === installed)).toBe(installed);
  });

  it('says in one line how to install it on Debian/Ubuntu and macOS', () => {
    let error: unknown;
    try {
      chromiumPath({}, () => false);
    } catch (caught) {
      error = caught;
    }
    expect(error).toEqual(oneLineNaming('apt-get install -y chromium', 'Debian/Ubuntu', 'brew install --cask chromium', 'macOS'));
  });
});

describe('Python 3 with jsonschema', () => {
  it("prefers Debian's python3, whose jsonschema apt installs, then python3 on PATH", () => {
    expect(pythonWithJsonschema({}, () => true)).toBe('/usr/bin/python3');
    expect(pythonWithJsonschema({}, (python) => python === 'python3')).toBe('python3');
  });

  it('takes PYTHON when set', () => {
    expect(pythonWithJsonschema({ PYTHON: '/opt/py/bin/python3' }, (python) => python === '/opt/py/bin/python3')).toBe(
      '/opt/py/bin/python3',
    );
  });

  it('says in one line how to install it on Debian/Ubuntu and macOS', () => {
    let error: unknown;
    try {
      pythonWithJsonschema({}, () => false);
    } catch (caught) {
      error = caught;
    }
    expect(error).toEqual(
      oneLineNaming('apt-get install -y python3-jsonschema', 'Debian/Ubuntu', 'pip install --user jsonschema', 'macOS'),
    );
  });
});
