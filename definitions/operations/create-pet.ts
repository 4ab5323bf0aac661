// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { newPetSchema } from '../fields/pet-fields';
import { CLIENT_SETUP, CURL_AUTHORIZATION, LOCAL_SERVER_URL } from './code-samples';
import { defineOperation } from './operation-contract';
import { petSchema } from './pet-schemas';

/** Largest request body we accept (decision 12); API Gateway's own limit is 10 MB. */
export const MAX_BODY_BYTES = 16 * 1024;
/** How long an Idempotency-Key is remembered, per API key (decision 11). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

const idempotencyKeyMessage =
  'must be 1 to 255 visible ASCII characters (! to ~, no space), in quotes without " or \\ inside, or bare; e.g. a UUID in quotes';

/**
 * The value of an `Idempotency-Key` request header (IETF httpapi draft: a
 * structured-field string, so usually quoted; a bare token is accepted too):
 * 1 to 255 visible ASCII characters (U+0021–U+007E: a space is not one),
 * without `"` or `\` inside quotes. Parsed to the key itself, without quotes.
 */
export const idempotencyKeySchema = z.string().transform((header, context) => {
  const trimmed = header.trim();
  const quoted = /^"(.*)"$/.exec(trimmed);
  const key = quoted ? quoted[1] : trimmed;
  if (!key || key.length > 255 || !/^[\x21-\x7e]+$/.test(key) || (quoted && /["\\]/.test(key))) {
    context.addIssue({ code: 'custom', message: idempotencyKeyMessage });
    return z.NEVER;
  }
  return key;
});

/**
 * The same rule as a JSON Schema pattern. Written without lookahead or escapes
 * such as \x21, which fall outside the portable regex subset (see NAME_PATTERN
 * in openapi/schemas.ts); test/unit/openapi-schemas.test.ts checks that it and
 * idempotencyKeySchema agree.
 */
const idempotencyKeyForms = [
  '[!-~]', // one printable character, `"` included
  '[!#-~][!-~]{1,254}', // a bare token that does not start with `"`
  '"[!-~]{0,253}[!#-~]', // a bare token that starts with `"` but does not end with one
  '"[!#-\\[\\]-~]{1,255}"', // a structured-field string: no `"` or `\` inside
];
export const IDEMPOTENCY_KEY_PATTERN = `^(${idempotencyKeyForms.join('|')})$`;

/** POST /pets: adds a pet; an Idempotency-Key makes retries safe. */
export const createPetContract = defineOperation({
  operationId: 'createPet',
  description: [
    `Adds a pet; the service assigns its id. The body must be declared as JSON (\`application/json\`, or \`application/*+json\`, any parameters, any case: else 415), at most ${MAX_BODY_BYTES / 1024} KiB (else 413), and valid (else 400). Invalid input never changes anything. The 201 carries the pet and its URL in \`Location\`.`,
    `**Idempotent retries.** Send an \`Idempotency-Key\` (IETF httpapi draft; e.g. a random UUID in quotes) to make a retry safe: the same key with the same body returns the original 201 and creates nothing; the same key with another body is a 422 \`idempotency_key_reused\`; a duplicate sent while the first is still in flight is a 409 \`request_in_progress\` (retry after Retry-After). Keys are remembered per API key for ${IDEMPOTENCY_TTL_SECONDS / 3600} hours. A refused request (4xx) is not remembered.`,
  ].join('\n\n'),
  request: {
    headers: z.object({ 'Idempotency-Key': idempotencyKeySchema.optional() }),
    body: newPetSchema,
    bodyDescription: `The pet to add, as JSON: \`application/json\` or any \`application/*+json\` type, at most ${MAX_BODY_BYTES / 1024} KiB.`,
  },
  parameters: {
    'Idempotency-Key': {
      description: `Makes a retried create safe: 1 to 255 visible ASCII characters (\`!\` to \`~\`, U+0021–U+007E: no space, tab or other control character), as a structured-field string (in quotes, then without \`"\` or \`\\\` inside) or a bare token. Remembered per API key for ${IDEMPOTENCY_TTL_SECONDS / 3600} hours.`,
      schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN },
      example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
    },
  },
  success: {
    status: 201,
    schema: petSchema,
    description: 'The pet, created (or, for a replayed Idempotency-Key, the pet first created).',
    headers: {
      Location: {
        description: 'The absolute URL of the pet (RFC 9110, section 15.3.2): the stage URL followed by `/pets/{id}`.',
        required: true,
        schema: { type: 'string', format: 'uri', pattern: '/pets/[1-9][0-9]*$' },
      },
    },
  },
  errorStatuses: [400, 409, 413, 415, 422],
  errorDescriptions: {
    409: 'A request with the same Idempotency-Key is still in flight. Retry after Retry-After: the retry gets the original 201.',
    422: 'The Idempotency-Key was already used with a different body. Use a new key for a new pet.',
  },
  limits: { MAX_BODY_BYTES, IDEMPOTENCY_TTL_SECONDS },
  samples: {
    curl: `curl -X POST ${CURL_AUTHORIZATION} \\\n  -H 'Content-Type: application/json' \\\n  -H 'Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"' \\\n  -d '{"name": "Rex", "categoryId": 1}' \\\n  '${LOCAL_SERVER_URL}/pets'`,
    client: `${CLIENT_SETUP}\n\n// Sends an Idempotency-Key and keeps it for its retries.\nconst rex = await petStore.createPet({ name: 'Rex', categoryId: 1 });\nconsole.log(rex.id, rex.status); // status: 'available'`,
  },
});
