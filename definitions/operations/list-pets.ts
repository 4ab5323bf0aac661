// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { petStatusSchema } from '../fields/pet-fields';
import { CLIENT_SETUP, CURL_AUTHORIZATION, LOCAL_SERVER_URL } from './code-samples';
import { defineOperation } from './operation-contract';
import { petSchema } from './pet-schemas';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/**
 * `limit` is written as `petId` is: plain decimal, no sign, no leading zero
 * (decision 4). One spelling per value, so `020` and `0020` are both a 400,
 * not one accepted and the other refused by its length.
 */
const limitMessage = `must be a plain decimal integer from 1 to ${MAX_LIMIT} (no sign, no leading zero)`;
/**
 * What a cursor can look like: unpadded base64url (functions/domain/cursor.ts
 * makes them; a unit test checks that every cursor it makes matches).
 */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,200}$/;

/** GET /pets: a page of pets in ascending id order, optionally of one status. */
export const listPetsContract = defineOperation({
  operationId: 'listPets',
  description: [
    `Pets in ascending id order, at most \`limit\` (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}) a page, optionally only those in one \`status\`. Unknown query parameters are ignored; a parameter sent twice (\`limit=1&limit=2\`) is a 400 naming it.`,
    'When more pets exist, the response carries the next page twice: `Link: <absolute URL of the next page>; rel="next"` (RFC 8288), to follow as it is, and `X-Next-Cursor`, the opaque cursor of that page, for clients that build requests from parameters: send it as `cursor` with the same `status` (and `limit`). The body stays a JSON array. Page until a response comes without them. A malformed or altered cursor, one holding a value the service could not have issued, or one used with another `status` than the one it was made for, is a 400 naming `cursor`.',
    'In AWS, a pet just created may take a moment to appear in lists (they read an eventually consistent index).',
  ].join('\n\n'),
  request: {
    query: z.object({
      limit: z
        .string()
        .regex(/^[1-9]\d{0,2}$/, limitMessage)
        .transform(Number)
        .pipe(z.number().min(1, limitMessage).max(MAX_LIMIT, limitMessage))
        .default(DEFAULT_LIMIT),
      status: petStatusSchema.optional(),
      cursor: z.string().regex(CURSOR_PATTERN, 'is invalid: use the URL of the Link rel="next" header as it is').optional(),
    }),
  },
  parameters: {
    limit: {
      description: `How many pets a page holds at most: a plain decimal integer from 1 to ${MAX_LIMIT}, without sign or leading zero (\`020\` is a 400); ${DEFAULT_LIMIT} when not sent.`,
      schema: { default: DEFAULT_LIMIT, type: 'integer', minimum: 1, maximum: MAX_LIMIT },
    },
    status: { description: 'Only pets in this state.' },
    cursor: {
      description:
        'Opaque: never build it, copy it from the `Link: rel="next"` URL (best: follow that URL as it is). Valid only with the `status` it was made for.',
    },
  },
  success: {
    status: 200,
    schema: z.array(petSchema).max(MAX_LIMIT),
    description: 'A page of pets, in ascending id order.',
    headers: {
      Link: {
        description: 'Present when more pets exist: the absolute URL of the next page (RFC 8288). Follow it as it is.',
        required: false,
        schema: { type: 'string', pattern: '^<[^>]+>; rel="next"$' },
      },
      'X-Next-Cursor': {
        description:
          'Present when more pets exist (with `Link`): the opaque cursor of the next page. Send it as the `cursor` query parameter, with the same `status` and `limit`.',
        required: false,
        schema: { type: 'string', pattern: CURSOR_PATTERN.source },
      },
    },
  },
  errorStatuses: [400],
  limits: { DEFAULT_LIMIT, MAX_LIMIT },
  samples: {
    curl: `curl ${CURL_AUTHORIZATION} \\\n  '${LOCAL_SERVER_URL}/pets?status=available&limit=20'`,
    client: `${CLIENT_SETUP}\n\n// Every page, following Link: rel="next".\nfor await (const pet of petStore.allPets({ status: 'available', limit: 20 })) {\n  console.log(pet.id, pet.name);\n}`,
  },
});
