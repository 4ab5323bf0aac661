import { join } from 'node:path';
import { buildOpenApiDocument } from './build-document';

/** Where the generated files live, relative to the project root. */
export const DOCUMENT_PATH = 'openapi/openapi.json';
export const CLIENT_TYPES_PATH = 'client/openapi-types.ts';

export const projectRoot = join(__dirname, '..');

/** The OpenAPI document exactly as it is committed: two-space JSON, one final newline. */
export function renderDocument(): string {
  // Invisible characters (in the name pattern) written as \u escapes, so that the file shows them; the JSON is the same.
  const json = JSON.stringify(buildOpenApiDocument(), null, 2).replace(
    /[\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `${json}\n`;
}

/**
 * The client's TypeScript types, generated from the document by
 * openapi-typescript (an ESM package with a CommonJS build, loaded on demand so
 * that importing this module stays cheap).
 */
export async function renderClientTypes(documentJson: string = renderDocument()): Promise<string> {
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  // defaultNonNullable off: a field with a default (NewPet.status) stays optional to send.
  const ast = await openapiTS(JSON.parse(documentJson), { silent: true, defaultNonNullable: false });
  const header = `// Generated from ${DOCUMENT_PATH} by \`npm run openapi\` (openapi-typescript). Do not edit.\n`;
  return header + astToString(ast);
}
