import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Runs test/support/python-jsonschema.py: Python's jsonschema (Debian's
 * python3-jsonschema) validates values against schemas of openapi/openapi.json,
 * after Python's `re` compiled every pattern of the document.
 */
export interface PythonCase {
  /** JSON Pointer of a schema in the document, e.g. `/components/schemas/Pet`. */
  pointer: string;
  value: unknown;
  /** Names the case in a failure. */
  label: string;
}

const projectRoot = join(__dirname, '..', '..');
const SCRIPT = join(__dirname, 'python-jsonschema.py');
/** `python3` on PATH may be an interpreter without jsonschema (e.g. a pyenv one): Debian's comes first. */
const CANDIDATES = ['/usr/bin/python3', 'python3'];

let interpreter: string | undefined;

function pythonWithJsonschema(): string {
  interpreter ??= CANDIDATES.find((candidate) => spawnSync(candidate, ['-c', 'import jsonschema'], { encoding: 'utf8' }).status === 0);
  if (!interpreter) throw new Error('No Python 3 with jsonschema: apt-get install -y python3-jsonschema (.ci/run does it)');
  return interpreter;
}

export function validateWithPython(
  cases: PythonCase[],
  document = join(projectRoot, 'openapi', 'openapi.json'),
): { patterns: number; failures: string[] } {
  const run = spawnSync(pythonWithJsonschema(), [SCRIPT], {
    input: JSON.stringify({ document, cases }),
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`python-jsonschema.py failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout) as { patterns: number; failures: string[] };
}
