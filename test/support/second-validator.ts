import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dereference, type Schema, Validator, validate } from '@cfworker/json-schema';

/**
 * A second JSON Schema implementation, independent of ajv (which the contract
 * check uses): @cfworker/json-schema, a validator of its own lineage (no code
 * shared with ajv, no code generation) that implements draft 2020-12, the
 * dialect of OpenAPI 3.1. It reads values against schemas of
 * openapi/openapi.json as a client built on another implementation would, so
 * a schema that only ajv reads our way, or an ajv bug that lets a body through,
 * shows up. npm ci installs it: nothing outside npm is needed.
 */
export interface SchemaCase {
  /** JSON Pointer of a schema in the document, e.g. `/components/schemas/Pet`. */
  pointer: string;
  value: unknown;
  /** Names the case in a failure. */
  label: string;
}

const projectRoot = join(__dirname, '..', '..');
/** The base URI the document is indexed under; every `#/…` $ref of the document resolves in it. */
const DOCUMENT_URI = new URL('https://petstore.invalid/openapi.json');

interface IndexedDocument {
  document: Schema;
  /** Every schema of the document by its absolute URI, as the library's own dereference indexes them. */
  lookup: Record<string, Schema | boolean>;
}
const indexed = new Map<string, IndexedDocument>();

function indexOf(path: string): IndexedDocument {
  let entry = indexed.get(path);
  if (!entry) {
    // The whole document is indexed, every sub-object by its JSON Pointer, so that each local
    // $ref ("#/components/…") resolves as it does in the document. (The library marks what it indexes: a copy of its own.)
    const document = { ...(JSON.parse(readFileSync(path, 'utf8')) as Schema), $id: DOCUMENT_URI.href };
    entry = { document, lookup: dereference(document) };
    indexed.set(path, entry);
  }
  return entry;
}

/** The schema at a JSON Pointer, indexed under its pointer if the library's walk did not reach it (it skips arrays such as an operation's `parameters`). */
function schemaAt({ document, lookup }: IndexedDocument, pointer: string): Schema {
  const schema = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, segment) => (node as Record<string, unknown> | undefined)?.[segment], document) as Schema | undefined;
  if (!schema || typeof schema !== 'object') throw new Error(`No schema at ${pointer} in the document`);
  if (schema.__absolute_uri__ === undefined) dereference(schema, lookup, DOCUMENT_URI, pointer);
  return schema;
}

/** Every `pattern` of a document, with its JSON Pointer. */
export function patternsOf(node: unknown, path = ''): { where: string; pattern: string }[] {
  if (Array.isArray(node)) return node.flatMap((value, index) => patternsOf(value, `${path}/${index}`));
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === 'pattern' && typeof value === 'string' ? [{ where: `${path}/pattern`, pattern: value }] : patternsOf(value, `${path}/${key}`),
  );
}

/**
 * Validates each case against the schema at its pointer and reports every error, each as
 * `<label>: <message> at <instance location>`. First, every `pattern` of the document is
 * handed to the second validator on its own: one it cannot compile is a failure.
 */
export function validateWithSecondValidator(
  cases: SchemaCase[],
  document = join(projectRoot, 'openapi', 'openapi.json'),
): { patterns: number; failures: string[] } {
  const entry = indexOf(document);
  const failures: string[] = [];
  let compiled = 0;
  for (const { where, pattern } of patternsOf(entry.document)) {
    try {
      new Validator({ type: 'string', pattern }, '2020-12').validate('');
      compiled++;
    } catch (error) {
      failures.push(`pattern at ${where}: ${(error as Error).message}`);
    }
  }
  for (const { pointer, value, label } of cases) {
    // Every error, not the first only (shortCircuit off), as a client reporting a bad body would.
    const { errors } = validate(value, schemaAt(entry, pointer), '2020-12', entry.lookup, false);
    // The library reports each failing subschema ("A subschema had errors.") above the keyword that failed: keep the leaves.
    const leaves = errors.filter(({ keyword }) => !['$ref', 'properties', 'items', 'allOf', 'anyOf', 'oneOf'].includes(keyword));
    for (const error of leaves.length > 0 ? leaves : errors) failures.push(`${label}: ${error.error} (at ${error.instanceLocation})`);
  }
  return { patterns: compiled, failures };
}
