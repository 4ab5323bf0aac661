/**
 * Comments cite "decision N" and "interface spec, part N": every number cited
 * must be written down in docs/decisions.md, under the list it belongs to.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const projectRoot = path.resolve(__dirname, '../..');
const sourceFolders = ['admin', 'bench', 'bin', 'client', 'definitions', 'functions', 'lib', 'local', 'openapi', 'scripts', 'test'];

function typeScriptFiles(folder: string): string[] {
  if (!fs.existsSync(folder)) return [];
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The numbered items ("N. **…") of the section under this heading. */
function numberedItems(document: string, heading: string): Set<number> {
  const start = document.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/decisions.md has no section "${heading}"`);
  const end = document.indexOf('\n## ', start + 1);
  const section = document.slice(start, end < 0 ? undefined : end);
  return new Set([...section.matchAll(/^(\d+)\. \*\*/gm)].map((match) => Number(match[1])));
}

/** Every number cited as "decision(s) N[, N][ and N]" or "spec, part N", with where. */
function citations(pattern: RegExp): { number: number; where: string }[] {
  const found: { number: number; where: string }[] = [];
  for (const file of sourceFolders.flatMap((folder) => typeScriptFiles(path.join(projectRoot, folder)))) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, index) => {
      for (const match of line.matchAll(pattern)) {
        for (const number of match[1]!.match(/\d+/g) ?? []) {
          found.push({ number: Number(number), where: `${path.relative(projectRoot, file)}:${index + 1}` });
        }
      }
    });
  }
  return found;
}

const document = fs.readFileSync(path.join(projectRoot, 'docs', 'decisions.md'), 'utf8');

it('documents every decision the code cites', () => {
  const decisions = numberedItems(document, 'Our decisions');
  expect(decisions.size).toBe(22);
  const cited = citations(/decisions? (\d+(?:(?:, | and )\d+)*)/gi);
  expect(cited.length).toBeGreaterThan(0);
  expect(cited.filter(({ number }) => !decisions.has(number))).toEqual([]);
});

it('documents every part of the interface spec the code cites', () => {
  const parts = numberedItems(document, 'The interface, part by part');
  expect(parts.size).toBe(9);
  const cited = citations(/spec, parts? (\d+(?:(?:, | and )\d+)*)/gi);
  expect(cited.length).toBeGreaterThan(0);
  expect(cited.filter(({ number }) => !parts.has(number))).toEqual([]);
});
