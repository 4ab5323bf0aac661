import { spawnSync } from 'node:child_process';
import { DOCUMENT_PATH, projectRoot } from '../../openapi/contract-files';

/**
 * The committed document lints clean with two independent linters: Redocly CLI,
 * with the recommended rules raised to errors (openapi/redocly.yaml): 0 errors,
 * 0 warnings; and Spectral's `spectral:oas` ruleset (openapi/spectral.yaml): 0 errors.
 */
it(`${DOCUMENT_PATH} passes redocly lint with no error and no warning`, () => {
  const run = spawnSync(
    process.execPath,
    [require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--config', 'openapi/redocly.yaml', '--format', 'json', DOCUMENT_PATH],
    {
      cwd: projectRoot,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      timeout: 120_000,
    },
  );
  const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; message: string }[];
  };
  expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  expect(run.status).toBe(0);
});

it(`${DOCUMENT_PATH} passes spectral lint (spectral:oas) with no error`, () => {
  const run = spawnSync(
    process.execPath,
    [
      require.resolve('@stoplight/spectral-cli/dist/index.js'),
      'lint',
      '--ruleset',
      'openapi/spectral.yaml',
      '--format',
      'json',
      '--quiet',
      DOCUMENT_PATH,
    ],
    { cwd: projectRoot, encoding: 'utf8', timeout: 120_000 },
  );
  const findings = JSON.parse(run.stdout.slice(run.stdout.indexOf('['))) as {
    code: string;
    message: string;
    severity: number;
    path: string[];
  }[];
  // Severity 0 is an error (1 a warning, e.g. info-contact: the API names no contact).
  expect(
    findings
      .filter((finding) => finding.severity === 0)
      .map((finding) => `${finding.code} at ${finding.path.join('.')}: ${finding.message}`),
  ).toEqual([]);
  expect(findings.length).toBeLessThanOrEqual(1);
});
