import { spawnSync } from 'node:child_process';
import { DOCUMENT_PATH, projectRoot } from '../../openapi/contract-files';

/**
 * The committed document lints clean with Redocly CLI, with the recommended
 * rules raised to errors (openapi/redocly.yaml): 0 errors, 0 warnings.
 */
it(`${DOCUMENT_PATH} passes redocly lint with no error and no warning`, () => {
  const run = spawnSync(
    process.execPath,
    [require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--config', 'openapi/redocly.yaml', '--format', 'json', DOCUMENT_PATH],
    { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, timeout: 120_000 },
  );
  const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; message: string }[];
  };
  expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  expect(run.status).toBe(0);
});
