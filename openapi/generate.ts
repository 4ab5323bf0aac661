/**
 * `npm run openapi`: writes the OpenAPI document (openapi/openapi.json) and the
 * client's types generated from it (client/openapi-types.ts).
 * `npm run openapi -- --check` writes nothing and fails if either is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_TYPES_PATH, DOCUMENT_PATH, projectRoot, renderClientTypes, renderDocument } from './contract-files';

async function main(): Promise<void> {
  const document = renderDocument();
  const files = { [DOCUMENT_PATH]: document, [CLIENT_TYPES_PATH]: await renderClientTypes(document) };
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [path, content] of Object.entries(files)) {
    const absolute = join(projectRoot, path);
    const current = readOrEmpty(absolute);
    if (current === content) {
      console.log(`${path}: up to date`);
    } else if (check) {
      console.error(`${path}: stale; run npm run openapi`);
      stale++;
    } else {
      writeFileSync(absolute, content);
      console.log(`${path}: written`);
    }
  }
  if (stale > 0) process.exit(1);
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
