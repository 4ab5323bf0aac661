import { ApiError } from './errors';

/**
 * The value of an `Idempotency-Key` request header (IETF httpapi draft: a
 * structured-field string, so usually quoted; a bare token is accepted too).
 * 1 to 255 printable ASCII characters; undefined when the header is absent.
 */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  const quoted = /^"(.*)"$/.exec(trimmed);
  const key = quoted ? quoted[1] : trimmed;
  if (!key || key.length > 255 || !/^[\x21-\x7e]+$/.test(key) || (quoted && /["\\]/.test(key))) {
    throw new ApiError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters, e.g. a UUID in quotes.');
  }
  return key;
}
