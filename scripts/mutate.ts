/**
 * `npm run mutate [-- --only NAME]`: puts each realistic bug of
 * test/simulation/mutations.ts into functions/rate-limit/, one at a time,
 * runs CI's seeds of the customer simulation on it (scripts/simulate.ts
 * --first-failure, in a child process that loads the mutated file), puts the
 * file back, and prints a table: the mutation, whether the seeds caught it,
 * the first failing seed and the promise it broke. Exits non-zero when a
 * mutation survives or cannot be applied.
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
const { values } = parseArgs({ options: { only: { type: 'string' } } });

interface Row {
  mutation: string;
  caught: 'yes' | 'no';
  seed: string;
  invariant: string;
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

/** Runs CI's seeds in a child process (which loads the files as they are now) until the first broken history. */
function runSeeds(): { seed?: number; invariant?: string } {
  const tsx = require.resolve('tsx/cli');
  const run = spawnSync(
    process.execPath,
    [tsx, join(root, 'scripts', 'simulate.ts'), '--from', '1', '--seeds', String(CI_HISTORIES), '--first-failure'],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  if (run.status === 2 || !last.startsWith('{')) throw new Error(`the simulation did not run:\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(last) as { seed?: number; invariant?: string };
}

function tryMutation(mutation: Mutation, restore: { current?: () => void }): Row {
  const path = join(root, mutation.file);
  const original = readFileSync(path, 'utf8');
  const text = mutated(original, mutation);
  const started = Date.now();
  restore.current = () => writeFileSync(path, original);
  try {
    writeFileSync(path, text);
    const found = runSeeds();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (found.seed === undefined) return { mutation: mutation.name, caught: 'no', seed: '—', invariant: '—', seconds };
    return { mutation: mutation.name, caught: 'yes', seed: String(found.seed), invariant: found.invariant ?? '', seconds };
  } finally {
    restore.current();
    restore.current = undefined;
  }
}

function table(rows: Row[]): string {
  const header: Row = { mutation: 'mutation', caught: 'caught' as 'yes', seed: 'first failing seed', invariant: 'invariant', seconds: 's' };
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
