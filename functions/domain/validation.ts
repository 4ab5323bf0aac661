import type { z } from 'zod';
import { ApiError } from './errors';

/**
 * Parses input with a zod schema; on failure throws a 400 whose message names
 * the offending field in plain words (never zod's raw output).
 */
export function parseOrThrow<Schema extends z.ZodType>(schema: Schema, input: unknown, what: string): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new ApiError('invalid_request', `The ${what} is invalid.`);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    throw new ApiError('invalid_request', `Unknown field${issue.keys.length > 1 ? 's' : ''} in the ${what}: ${keys}.`);
  }
  const field = issue.path.map(String).join('.');
  throw new ApiError('invalid_request', field ? `${field} ${issue.message}.` : `${issue.message}.`);
}
