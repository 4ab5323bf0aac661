/** @type {import('jest').Config} */
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }];

/** What every project shares; each project adds its folder and, if it needs one, DynamoDB Local. */
const common = {
  testEnvironment: 'node',
  // middy is ESM-only: let swc turn it into CommonJS for jest.
  transform: { '^.+\\.(t|j)sx?$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  // middy 7 exports its entry for `import` only; jest resolves for `require`: point at the file.
  moduleNameMapper: { '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  setupFiles: ['<rootDir>/test/support/environment.ts'],
};

/**
 * One DynamoDB Local for the projects that touch data; each test file makes its
 * own tables. Jest runs a project's globalSetup only when a test of that project
 * runs, and runs the same file once however many projects name it: unit and
 * infra never start Java.
 */
const withDynamoDbLocal = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

const project = (name, extra = {}) => ({ ...common, displayName: name, testMatch: [`<rootDir>/test/${name}/**/*.test.ts`], ...extra });

module.exports = {
  projects: [
    // Pure logic, the contract files, the linter: no Java, no DynamoDB Local, no network.
    project('unit'),
    // Repositories and tools against a real DynamoDB Local.
    project('integration', withDynamoDbLocal),
    // The API over real HTTP on the local gateway, on DynamoDB Local.
    project('e2e', withDynamoDbLocal),
    // `cdk synth` of the real stacks.
    project('infra'),
    // The seeded customer simulation (2,000 histories, about half a minute of CPU): no Java, no network.
    project('simulation'),
  ],
  testTimeout: 60_000,
  maxWorkers: 2,
};
