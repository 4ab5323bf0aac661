import fc from 'fast-check';
import type { ApiError } from '../../functions/domain/errors';
import { parseJsonBody, refusedMemberName } from '../../functions/http/json-body';

/**
 * Decision 12: a body whose object names a member twice (RFC 8259, section 4:
 * names "SHOULD be unique", and parsers differ on the rest) or names one
 * `__proto__` is refused (invalid_request, a 400) naming the member; every other valid JSON
 * text is read as JSON.parse reads it.
 */
const refusal = (text: string) => {
  try {
    parseJsonBody(text);
    return undefined;
  } catch (error) {
    return { code: (error as ApiError).code, message: (error as ApiError).message };
  }
};

it.each([
  ['{"name":"first","categoryId":1,"name":"second"}', 'The request body names the field "name" more than once.'],
  // The same name spelt with an escape is the same name to every parser.
  ['{"name":"a","n\\u0061me":"b"}', 'The request body names the field "name" more than once.'],
  ['{"name":"x","categoryId":1,"__proto__":{}}', 'Unknown field in the request body: "__proto__".'],
  ['{"name":"x","\\u005f_proto__":{}}', 'Unknown field in the request body: "__proto__".'],
  // Anywhere in the body, not only at its top.
  ['{"status":{"__proto__":{"admin":true}}}', 'Unknown field in the request body: "__proto__".'],
  ['{"tags":[{"a":1},{"b":2,"b":3}]}', 'The request body names the field "b" more than once.'],
])('%s → 400 naming the member', (text, message) => {
  expect(refusal(text)).toEqual({ code: 'invalid_request', message });
});

it.each([
  // One name in two objects, names that only look alike, and quotes, braces and commas inside strings.
  '[{"a":1},{"a":2}]',
  '{"a":{"a":{"a":1}},"b":[{"a":1}]}',
  '{"Name":1,"name":2,"name ":3}',
  '{"a":"\\",\\"a\\":1","b":"}{[],"}',
  '{"a\\\\":1,"a":2}',
  '{"proto":1,"__proto":2,"constructor":{"prototype":{}}}',
  '{}',
  '[]',
  '"__proto__"',
  '["__proto__","__proto__"]',
])('%s is read as JSON.parse reads it', (text) => {
  expect(parseJsonBody(text)).toEqual(JSON.parse(text));
});

it('invalid JSON is still "not valid JSON", before any member is looked at', () => {
  expect(refusal('{"a":1,"a":')).toEqual({ code: 'invalid_request', message: 'The request body is not valid JSON.' });
});

it('any JSON text without repeated or __proto__ names passes; the same text with one member repeated does not', () => {
  const withoutProto = fc.jsonValue().filter((value) => !JSON.stringify(value).includes('"__proto__"'));
  fc.assert(
    fc.property(withoutProto, fc.string(), (value, name) => {
      fc.pre(name !== '__proto__');
      const text = JSON.stringify(value);
      expect(refusedMemberName(text)).toBeUndefined();
      const member = `${JSON.stringify(name)}:${text}`;
      expect(refusedMemberName(`{${member},"other":[${text}],${member}}`)).toEqual({ name, reason: 'repeated' });
    }),
  );
});
