import { join } from 'node:path';
import { buildOpenApiDocument } from './build-document';

/** Where the generated files live, relative to the project root. */
export const DOCUMENT_PATH = 'openapi/openapi.json';
export const CLIENT_TYPES_PATH = 'client/openapi-types.ts';

export const projectRoot = join(__dirname, '..');

/** The OpenAPI document exactly as it is committed: two-space JSON, one final newline. */
export function renderDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
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
