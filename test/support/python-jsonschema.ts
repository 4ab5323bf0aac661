import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pythonWithJsonschema } from './prerequisites';

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
let interpreter: string | undefined;

export function validateWithPython(
  cases: PythonCase[],
  document = join(projectRoot, 'openapi', 'openapi.json'),
): { patterns: number; failures: string[] } {
  interpreter ??= pythonWithJsonschema();
  const run = spawnSync(interpreter, [SCRIPT], {
    input: JSON.stringify({ document, cases }),
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`python-jsonschema.py failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout) as { patterns: number; failures: string[] };
}
