/**
 * `npm run mutate [-- --only NAME] [-- --quick]`: puts each realistic bug of
 * test/simulation/mutations.ts into functions/rate-limit/, one at a time,
 * runs CI's seeds of the customer simulation on it (scripts/simulate.ts, in a
 * child process that loads the mutated file), puts the file back, and prints
 * a table: the mutation, whether the seeds caught it, the first failing seed
 * and the promise it broke, and every other promise it broke with the first
 * seed that shows it (which auditor check catches which bug). `--quick`
 * stops each run at its first broken history. Exits non-zero when a mutation
 * survives or cannot be applied.
 *
 * The file is changed in place and restored in a `finally`, and on SIGINT or
 * SIGTERM before exiting; a search text that does not occur exactly once is
 * an error, never a pass. StrykerJS would give a score over every operator;
 * it is not a dependency of this project.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Mutation, mutations } from '../test/simulation/mutations';
import { CI_HISTORIES } from '../test/support/customer-simulation';

const root = join(__dirname, '..');
const { values } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean' } } });

interface Row {
  mutation: string;
  caught: 'yes' | 'no';
  seed: string;
  invariant: string;
  /** Every other promise broken, with its first seed. */
  also: string;
  seconds: string;
}

/** The file's text with the mutation applied; throws unless the search text occurs exactly once. */
function mutated(original: string, mutation: Mutation): string {
  const occurrences = original.split(mutation.search).length - 1;
  if (occurrences !== 1) {
    throw new Error(`mutation ${mutation.name}: its search text occurs ${occurrences} times in ${mutation.file} (exactly once expected)`);
  }
  return original.replace(mutation.search, () => mutation.replace);
}

/** Runs CI's seeds in a child process (which loads the files as they are now): each promise broken, with its first seed. */
function runSeeds(): Record<string, number> {
  const tsx = require.resolve('tsx/cli');
  const mode = values.quick ? '--first-failure' : '--every-promise';
  const run = spawnSync(
    process.execPath,
    [tsx, join(root, 'scripts', 'simulate.ts'), '--from', '1', '--seeds', String(CI_HISTORIES), mode],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  if (run.status === 2 || !last.startsWith('{')) throw new Error(`the simulation did not run:\n${run.stdout}\n${run.stderr}`);
  const found = JSON.parse(last) as Record<string, number> | { seed?: number; invariant?: string };
  if (!values.quick) return found as Record<string, number>;
  const first = found as { seed?: number; invariant?: string };
  return first.seed === undefined ? {} : { [first.invariant!]: first.seed };
}

function tryMutation(mutation: Mutation, restore: { current?: () => void }): Row {
  const path = join(root, mutation.file);
  const original = readFileSync(path, 'utf8');
  const text = mutated(original, mutation);
  const started = Date.now();
  restore.current = () => writeFileSync(path, original);
  try {
    writeFileSync(path, text);
    const broken = Object.entries(runSeeds()).sort(([, a], [, b]) => a - b);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const [first, ...others] = broken;
    if (!first) return { mutation: mutation.name, caught: 'no', seed: '—', invariant: '—', also: '', seconds };
    const also = others.map(([promise, seed]) => `${promise} (${seed})`).join('; ');
    return { mutation: mutation.name, caught: 'yes', seed: String(first[1]), invariant: first[0], also, seconds };
  } finally {
    restore.current();
    restore.current = undefined;
  }
}

function table(rows: Row[]): string {
  const header: Row = {
    mutation: 'mutation',
    caught: 'caught' as 'yes',
    seed: 'first failing seed',
    invariant: 'invariant',
    also: 'also broken (first seed)',
    seconds: 's',
  };
  const keys = Object.keys(header) as (keyof Row)[];
  const widths = keys.map((key) => Math.max(...[header, ...rows].map((row) => row[key].length)));
  const line = (row: Row) => `| ${keys.map((key, index) => row[key].padEnd(widths[index]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function main(): number {
  const chosen = mutations.filter((mutation) => values.only === undefined || mutation.name === values.only);
  if (chosen.length === 0) throw new Error(`no mutation named ${values.only}`);
  const restore: { current?: () => void } = {};
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      restore.current?.();
      process.exit(130);
    });
  }
  const rows: Row[] = [];
  for (const mutation of chosen) {
    const row = tryMutation(mutation, restore);
    rows.push(row);
    console.log(
      `${mutation.name} (${mutation.behaviour}): ${row.caught === 'yes' ? `caught by seed ${row.seed}, "${row.invariant}"` : 'SURVIVED'}`,
    );
  }
  console.log(`\n${table(rows)}\n`);
  const survived = rows.filter((row) => row.caught === 'no');
  console.log(`${rows.length - survived.length} of ${rows.length} mutations caught by CI's ${CI_HISTORIES} seeds`);
  return survived.length > 0 ? 1 : 0;
}

process.exitCode = main();
