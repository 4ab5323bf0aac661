import { ApiError } from '../domain/errors';

const NOT_JSON = 'The request body is not valid JSON.';

/**
 * A JSON request body as a value, under decision 12: valid JSON (RFC 8259), in
 * which no object names a member twice and none is named `__proto__`.
 *
 * RFC 8259, section 4: "The names within an object SHOULD be unique", and an
 * object whose names are not "may" be read as "only the last name/value pair",
 * as an error, or otherwise: parsers that read one body two ways are how a
 * check in one place and a use in another come to disagree. JSON.parse keeps
 * the last, silently; we refuse the body and name the member.
 *
 * `__proto__` is a member like any other to JSON.parse (an own property), but
 * code that copies objects with assignment sets the prototype from it. It is
 * no field of any operation (decision 2: unknown fields are refused), so it is
 * refused as one, wherever it sits.
 *
 * The handler applies this rule in two steps (functions/http/api-handler.ts):
 * refuseRepeatedOrPrototypeMembers on the text, then middy's JSON body parser.
 */
export function parseJsonBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_request', NOT_JSON);
  }
  const refused = refusedMemberName(text);
  if (!refused) return value;
  const name = JSON.stringify(refused.name);
  // Worded as parseOrThrow words an unknown field (functions/domain/validation.ts).
  if (refused.reason === 'prototype') throw new ApiError('invalid_request', `Unknown field in the request body: ${name}.`);
  throw new ApiError('invalid_request', `The request body names the field ${name} more than once.`);
}

/**
 * Decision 12's member rule, run on the text before middy's JSON body parser
 * reads it: throws the refusal parseJsonBody would, and returns without
 * parsing when no member is refused (the parser then reads the text once).
 * Only on a refusal is the text parsed here, so that a text that is not JSON
 * is still "not valid JSON" before any member is looked at.
 */
export function refuseRepeatedOrPrototypeMembers(text: string): void {
  let refused: boolean;
  try {
    refused = refusedMemberName(text) !== undefined;
  } catch {
    // The scan expects JSON; only a text that is not JSON can trip it.
    refused = true;
  }
  // Throws: "not valid JSON" when JSON.parse fails, else the member's refusal.
  if (refused) parseJsonBody(text);
}

/**
 * What middy's JSON body parser (@middy/http-json-body-parser) throws, as
 * decision 12 answers it: every parse failure is our 400 "not valid JSON", and
 * its forbidden key (`constructor` holding a `prototype`; `__proto__` never
 * reaches it) is an unknown field (decision 2), worded as the scan words
 * `__proto__`. It throws an HttpError with a numeric statusCode and the key in
 * `cause.data`; anything else is passed on unchanged.
 */
export function asBodyError(error: unknown): unknown {
  const thrown = error as { statusCode?: unknown; message?: unknown; cause?: { package?: unknown; data?: unknown } };
  if (thrown?.cause?.package !== '@middy/http-json-body-parser' || typeof thrown.statusCode !== 'number') return error;
  if (thrown.message === 'Forbidden key in JSON body') {
    return new ApiError('invalid_request', `Unknown field in the request body: ${JSON.stringify(String(thrown.cause.data))}.`);
  }
  return new ApiError('invalid_request', NOT_JSON);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * The first member name of `text` (valid JSON: JSON.parse read it) that an
 * object repeats, or that is `__proto__`; undefined if none. One pass over the
 * text, strings skipped with indexOf, one Set of names per open object: linear
 * in the text's length. Names are compared as JSON.parse reads them, escapes
 * decoded (`"n\u0061me"` is `name`).
 */
export function refusedMemberName(text: string): { name: string; reason: 'repeated' | 'prototype' } | undefined {
  // The names seen in each open object; null for an open array.
  const open: (Set<string> | null)[] = [];
  let expectingName = false;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = closingQuote(text, at);
      if (expectingName) {
        const raw = text.slice(at + 1, end);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(at, end + 1)) as string) : raw;
        if (name === '__proto__') return { name, reason: 'prototype' };
        const names = open[open.length - 1] as Set<string>;
        if (names.has(name)) return { name, reason: 'repeated' };
        names.add(name);
        expectingName = false;
      }
      at = end;
    } else if (code === OPEN_OBJECT) {
      open.push(new Set());
      expectingName = true;
    } else if (code === OPEN_ARRAY) {
      open.push(null);
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      open.pop();
      expectingName = false;
    } else if (code === COMMA) {
      expectingName = open[open.length - 1] instanceof Set;
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opening at `start`: the next one not escaped by an odd run of backslashes. */
function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (end > 0) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return text.length;
}
