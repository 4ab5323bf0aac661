import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleComposition } from '../measures/bundles';
import { bytesByPackage } from './bundling';
import { checkLine, markdownTable, ratiosSvg } from './report';
import { ADDED_ROUND_TRIP_MS, type BenchRun } from './run-context';

/** What the table's columns are and how each figure was taken: printed under every table. */
function legend(run: BenchRun): string[] {
  const { coldRuns, warmIterations, warmup, roundTripIterations } = run.settings;
  return [
    "Ours: the functions of the route table and the authorizer; (a) plain: one handler per route and a plain authorizer, no framework, written as a careful engineer would (zod imported as a namespace, like ours); (b) Express: one app for the three routes behind @vendia/serverless-express; (c) floor: the operation's DynamoDB request alone (no limiter, no validation framework, no logs or metrics), the least any implementation can do.",
    "All bundled with the CDK stack's esbuild options (ESM, minified, source maps, AWS SDK inside). Plain and Express do the same DynamoDB work per request as ours (limiter, id blocks), so ratios to them measure code; the ratio to the floor shows what the limiter and our code cost on top of one round trip.",
    `Cold init: import() of each bundle in a fresh node process with the function's environment (NODE_OPTIONS=--enable-source-maps, table names, region, credentials), ${coldRuns} processes per bundle, the bundles taking turns so that noise falls on all of them alike; the median of wall time (and of the process's CPU time).`,
    `Warm: in one process, sequential invocations with API Gateway REST proxy events carrying the authorizer context (an Enterprise key: the limiter counts every request, never refuses); per operation the contenders take turns in batches of 25, ${warmup} unmeasured then ${warmIterations} measured invocations each; p50 is the median.`,
    "Raw SDK rows: with our functions' SDK client, the operation's read alone, two of them sent together (what any second request costs on this machine), the limiter's decision alone (RateLimiter.admit: a lease write, an UpdateItem, or a read of the key's item when served from a lease) and the read and the count sent together: no implementation that counts a request before answering it can be faster than its count alone, and none that uses this SDK faster than the pair.",
    `Round trips: getPet and listPets against DynamoDB Local through a TCP relay in a process of its own (bench/support/network-delay-relay.mjs), once adding nothing and once adding ${ADDED_ROUND_TRIP_MS} ms to every DynamoDB round trip (half each way), ${warmup} unmeasured then ${roundTripIterations} measured invocations each, interleaved; the growth of the p50 ÷ the floor's growth is how many round trips a request waits for one after another: the floor sends exactly one request, so its growth is one round trip as the relay really adds it (its timers fire a millisecond or two late each way, so the floor grows by about 12 ms, not ${ADDED_ROUND_TRIP_MS}; the ratio column gives the growth ÷ the nominal ${ADDED_ROUND_TRIP_MS} ms); 2 when the count comes before the read (under 1 where the wait hid CPU work that the run without delay paid for).`,
  ];
}

/** Writes bench/results/latest.md and ratios.svg (a quick run: bench/results/tmp/…), and the README's Performance section if given the README's path. */
export function writeResults(
  run: BenchRun,
  options: { resultsDir: string; workDir: string; totalSeconds: number; machine: string; cores: string; readme?: string },
): string {
  const command = `npm run bench${run.quick ? ' -- --quick' : ''}`;
  const table = markdownTable(run.rows);
  const notes = legend(run);
  const targetLines = run.checks.map(checkLine);
  const metCount = run.checks.filter((check) => check.met).length;
  const subtitle = `${command} · ${new Date().toISOString().slice(0, 10)} · ${options.cores} cores · Node.js ${process.version}`;
  const markdown = [
    '# Benchmark results',
    '',
    `Command: \`${command}\` · machine: ${options.machine} · ${new Date().toISOString()} · total ${Math.round(options.totalSeconds)} s.`,
    '',
    table,
    '',
    ...notes.map((line) => `${line}  `),
    '',
    '![Ratios of our functions to the baselines](ratios.svg)',
    '',
    `## Targets: ${metCount} of ${run.checks.length} met`,
    '',
    ...targetLines,
    '',
    '## Bundle composition (esbuild metafile, bytes in the output)',
    '',
    ...bundleComposition(run, (bundle) => bytesByPackage(bundle.metafile)),
    '',
    ...(run.notes.length > 0 ? ['## Notes', '', ...run.notes.map((note) => `- ${note}`), ''] : []),
  ].join('\n');
  // A quick run is a smoke test: it leaves the recorded results alone.
  const outDir = run.quick ? options.workDir : options.resultsDir;
  const latestFile = join(outDir, run.quick ? 'latest-quick.md' : 'latest.md');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(latestFile, markdown);
  writeFileSync(join(outDir, run.quick ? 'ratios-quick.svg' : 'ratios.svg'), ratiosSvg(run.checks, subtitle));
  if (options.readme) {
    const section = readmeSection({
      command,
      table,
      notes,
      machine: options.machine,
      minutes: Math.max(1, Math.round(options.totalSeconds / 60)),
      met: `${metCount} of ${run.checks.length}`,
    });
    writeFileSync(options.readme, replaceSection(readFileSync(options.readme, 'utf8'), '## Performance', section));
  }
  process.stdout.write(
    `\n${table}\n\n${notes.join('\n')}\n\nTargets: ${metCount} of ${run.checks.length} met\n${targetLines.join('\n')}\n\n`,
  );
  return latestFile;
}

function readmeSection(parts: { command: string; table: string; notes: string[]; machine: string; minutes: number; met: string }): string {
  return [
    '## Performance',
    '',
    `\`${parts.command}\` (about ${parts.minutes} minutes; \`-- --quick\` for a smoke run) builds our functions, two baselines and the floor written in \`bench/baselines/\` —`,
    "(a) one plain handler per route, (b) one Express app behind `@vendia/serverless-express`, (c) the operation's DynamoDB request alone — with the esbuild options of the CDK stack, and",
    'measures them side by side in one run, interleaved, so that the ratios hold on a busy machine. It needs Java (DynamoDB Local), like `npm test`.',
    `Results of the run below (${parts.machine}):`,
    '',
    parts.table,
    '',
    ...parts.notes.map((line) => `${line}  `),
    '',
    '![Ratios of our functions to the baselines](bench/results/ratios.svg)',
    '',
    `Targets: ${parts.met} met — details, bundle composition and notes in \`bench/results/latest.md\`.`,
    '',
    ...whatMakesTheDifference,
  ].join('\n');
}

/** How our functions get where they are: the same every run, so written here once. */
const whatMakesTheDifference = [
  "**Reads in one round trip of wall time.** `getPet` and `listPets` send the limiter's update and their read together",
  '(`functions/http/api-handler.ts`: an operation whose route grants only reads (`GetItem`, `BatchGetItem`, `Query`) outside the rate-limit table).',
  'The verdict still decides the answer: a refused request answers 429 with the same headers as before and what was read is',
  'dropped (a refusal costs a read, never a count); a failed count answers 503. On DynamoDB Local the two requests share the',
  "machine's cores with the client and its SDK, so the pair takes longer than either request alone (the raw SDK rows): the",
  'overlap shows where each request is a network round trip, as on DynamoDB (the round-trip rows: ours waits for one, like',
  'the floor; counting before reading waits for two).',
  '',
  "**Cold start.** Our bundles resolve SDK credentials from the environment only, where Lambda puts the execution role's",
  '(an esbuild alias in `definitions/lambda-function.ts` swaps `@aws-sdk/credential-provider-node` for `functions/runtime/environment-credentials.ts`):',
  "the rest of the SDK's default chain (SSO, profiles, STS and SSO clients, instance metadata) is never used in Lambda but is",
  "about 135 KiB parsed at every cold start. The baselines keep NodejsFunction's default bundling, as a team would. The",
  "Powertools logger and metrics are built at their first use, and zod is imported as a namespace (`import * as z from 'zod'`)",
  'by every function and baseline, which lets esbuild drop the parts they do not use.',
  '',
];

/** Replaces a `## ` section of a Markdown document (up to the next `## ` heading) with `section`. */
export function replaceSection(document: string, heading: string, section: string): string {
  const start = document.indexOf(`${heading}\n`);
  if (start < 0) throw new Error(`no "${heading}" section to replace`);
  const next = document.indexOf('\n## ', start + heading.length);
  return `${document.slice(0, start)}${section}${next < 0 ? '' : document.slice(next + 1)}`;
}
