import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCUMENT_PATH, projectRoot } from '../../openapi/contract-files';
import { patternsOf, validateWithSecondValidator } from '../support/second-validator';

/**
 * The document must work for clients in any language, not only JavaScript.
 * JSON Schema 2020-12 Core, section 6.4 ("Regular Expressions",
 * https://json-schema.org/draft/2020-12/json-schema-core#section-6.4) recommends
 * a subset of regex syntax for interoperability: characters, simple, range and
 * complemented classes, the quantifiers + * ? {x} {x,y} {x,} (and lazy forms),
 * ^ and $, grouping and alternation. No \p{…}, \d, \x…, \u…, lookaround or (?:…).
 */
const document = JSON.parse(readFileSync(join(projectRoot, DOCUMENT_PATH), 'utf8')) as unknown;

/** What in a pattern falls outside the recommended subset: escapes other than of a syntax character, and `(?`. */
function nonPortableParts(pattern: string): string[] {
  const found: string[] = [];
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === '\\') {
      const escaped = pattern[index + 1] ?? '';
      if (!'^$\\.*+?()[]{}|/-'.includes(escaped) || escaped === '') found.push(`\\${escaped}`);
      index++;
    } else if (character === '(' && pattern[index + 1] === '?') {
      found.push('(?');
    }
  }
  return found;
}

const patterns = patternsOf(document);

it('has patterns, and every one keeps to the regex subset JSON Schema recommends', () => {
  expect(patterns.length).toBeGreaterThanOrEqual(3);
  expect(patterns.filter(({ pattern }) => nonPortableParts(pattern).length > 0)).toEqual([]);
});

it('the subset check refuses what other engines (Python, Go, …) cannot read', () => {
  expect(nonPortableParts('^[^\\p{Cc}]*$')).toEqual(['\\p']);
  expect(nonPortableParts('^(?:a|(?!b)c)\\x21\\d$')).toEqual(['(?', '(?', '\\x', '\\d']);
  expect(nonPortableParts('^[!#-\\[\\]-~]{1,255}$')).toEqual([]);
});

it('the second validator compiles every pattern of the document', () => {
  const { patterns: compiled, failures } = validateWithSecondValidator([]);
  expect(failures).toEqual([]);
  expect(compiled).toBe(patterns.length);
});

it('the second validator reads the name and Idempotency-Key rules as the server does', () => {
  const name = '/components/schemas/NewPet/properties/name';
  const idempotencyKey = '/paths/~1pets/post/parameters/0/schema';
  const accepted = [
    { pointer: name, value: 'Rex' },
    { pointer: name, value: ' Rex\u00a0' },
    { pointer: name, value: '🐶' },
    { pointer: idempotencyKey, value: '"8e03978e-40d5-43e8-bc93-6894a57f9324"' },
    { pointer: idempotencyKey, value: 'bare-token' },
    { pointer: idempotencyKey, value: '"' },
    { pointer: idempotencyKey, value: 'a"' },
  ];
  const refused = [
    { pointer: name, value: '' },
    { pointer: name, value: ' \t\u3000\u2028' },
    { pointer: name, value: 'Rex\u0000' },
    { pointer: name, value: 'Rex\u0085' },
    { pointer: name, value: 'x'.repeat(101) },
    { pointer: idempotencyKey, value: '""' },
    { pointer: idempotencyKey, value: '"a"b"' },
    { pointer: idempotencyKey, value: '"a\\b"' },
    { pointer: idempotencyKey, value: 'has space' },
    { pointer: idempotencyKey, value: 'x'.repeat(256) },
  ];
  const label = (value: string) => JSON.stringify(value);
  expect(validateWithSecondValidator(accepted.map((entry) => ({ ...entry, label: label(entry.value) }))).failures).toEqual([]);
  const { failures } = validateWithSecondValidator(refused.map((entry) => ({ ...entry, label: label(entry.value) })));
  expect(new Set(failures.map((failure) => failure.slice(0, failure.indexOf(': '))))).toEqual(
    new Set(refused.map((entry) => label(entry.value))),
  );
});

it('the second validator refuses a body the document does not allow (the e2e check can fail)', () => {
  const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
  const page = '/paths/~1pets/get/responses/200/content/application~1json/schema';
  expect(validateWithSecondValidator([{ pointer: page, value: [pet], label: 'page' }]).failures).toEqual([]);
  expect(
    validateWithSecondValidator([{ pointer: page, value: Array.from({ length: 101 }, () => pet), label: 'page of 101' }]).failures,
  ).toEqual([expect.stringMatching(/^page of 101: Array has too many items \(101 > 100\)/)]);
  expect(
    validateWithSecondValidator([
      { pointer: '/components/schemas/ErrorObject', value: { code: 'teapot', message: 'x', status: 418 }, label: 'error' },
    ]).failures.length,
  ).toBeGreaterThan(0);
});
