import { join } from 'node:path';
import { authorizerBundles, bundleName, operations } from '../support/contenders';
import { lambdaProcessEnvironment } from '../support/lambda-environment';
import { coldInitOnce } from '../support/measure';
import { formatRatio } from '../support/report';
import { type BenchRun, fmt, ratioTarget } from '../support/run-context';
import { median } from '../support/stats';

/** Cold-init limits: ours against the careful plain handler of the same operation, and against Express. */
const VS_PLAIN = 1.05;
const VS_EXPRESS = 0.65;

/**
 * Cold init: `import()` of each bundle in a fresh node process with the
 * function's environment, `coldRuns` processes per bundle, the bundles taking
 * turns (round r starts at bundle r) so that a noisy moment falls on all;
 * medians of wall time, and of the process's CPU time. Run before DynamoDB
 * Local takes a core.
 */
export async function measureColdInit(run: BenchRun): Promise<void> {
  const probe = join(__dirname, '..', 'support', 'cold-init-probe.mjs');
  const names = [
    ...operations.flatMap((op) => [bundleName('ours', op), bundleName('plain', op), bundleName('floor', op)]),
    'express',
    authorizerBundles.ours,
    authorizerBundles.plain,
  ];
  const wall = new Map<string, number[]>(names.map((name) => [name, []]));
  const cpu = new Map<string, number[]>(names.map((name) => [name, []]));
  run.progress(`cold init: ${run.settings.coldRuns} fresh node processes per bundle, ${names.length} bundles, interleaved`);
  for (let round = 0; round < run.settings.coldRuns; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length] as string;
      const sample = await coldInitOnce(probe, run.bundle(name).file, lambdaProcessEnvironment(name));
      wall.get(name)?.push(sample.initMs);
      cpu.get(name)?.push(sample.cpuMs);
    }
    if ((round + 1) % 5 === 0 || round + 1 === run.settings.coldRuns)
      run.progress(`  cold init ${round + 1}/${run.settings.coldRuns} rounds`);
  }
  const wallOf = (name: string) => median(wall.get(name) ?? []);
  const cpuOf = (name: string) => median(cpu.get(name) ?? []);
  const cell = (name: string) => `${fmt.ms(wallOf(name))} (CPU ${fmt.ms(cpuOf(name))})`;
  const measure = (what: string) => `Cold init ${what}, median of ${run.settings.coldRuns} processes: wall (CPU) ms`;
  const compare = (label: string, ours: string, plain: string, express?: string) => {
    const vsPlain = wallOf(ours) / wallOf(plain);
    const cpuRatio = (baseline: string) => `CPU time ${formatRatio(cpuOf(ours) / cpuOf(baseline))}`;
    const metPlain = ratioTarget(
      run,
      `cold init ${label} ÷ plain`,
      vsPlain,
      VS_PLAIN,
      `${fmt.ms(wallOf(ours))} ms vs ${fmt.ms(wallOf(plain))} ms (${cpuRatio(plain)})`,
    );
    if (!express) return { vsPlain, met: metPlain, vsExpress: undefined };
    const vsExpress = wallOf(ours) / wallOf(express);
    const metExpress = ratioTarget(
      run,
      `cold init ${label} ÷ Express`,
      vsExpress,
      VS_EXPRESS,
      `${fmt.ms(wallOf(ours))} ms vs ${fmt.ms(wallOf(express))} ms (${cpuRatio(express)})`,
    );
    return { vsPlain, met: `${metPlain}, ${metExpress}`, vsExpress };
  };
  for (const op of operations) {
    const ours = bundleName('ours', op);
    const result = compare(op, ours, bundleName('plain', op), 'express');
    run.rows.push({
      measure: measure(op),
      ours: cell(ours),
      plain: cell(bundleName('plain', op)),
      express: cell('express'),
      floor: cell(bundleName('floor', op)),
      ratio: `${formatRatio(result.vsPlain)} plain, ${formatRatio(result.vsExpress ?? 0)} Express`,
      target: `≤ ${formatRatio(VS_PLAIN)} plain, ≤ ${formatRatio(VS_EXPRESS)} Express`,
      met: result.met,
    });
  }
  const result = compare('authorizer', authorizerBundles.ours, authorizerBundles.plain);
  run.rows.push({
    measure: measure('authorizer'),
    ours: cell(authorizerBundles.ours),
    plain: cell(authorizerBundles.plain),
    express: '—',
    floor: '—',
    ratio: `${formatRatio(result.vsPlain)} plain`,
    target: `≤ ${formatRatio(VS_PLAIN)} plain`,
    met: result.met,
  });
}
