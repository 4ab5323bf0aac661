// The namespace import lets esbuild drop the parts of zod we do not use (half the bundle).
import * as z from 'zod';
import { MAX_ID } from '../fields/pet-fields';
import { CLIENT_SETUP, CURL_AUTHORIZATION, LOCAL_SERVER_URL } from './code-samples';
import { defineOperation } from './operation-contract';
import { petSchema } from './pet-schemas';

/** petId is an integer from 1 to 2^53-1 written in plain decimal; anything else is a 400. */
export const petIdPathSchema = z
  .string()
  .regex(/^[1-9]\d{0,15}$/, `must be an integer from 1 to ${MAX_ID}`)
  .transform(Number)
  .refine((id) => id <= MAX_ID, `must be an integer from 1 to ${MAX_ID}`);

/** GET /pets/{petId} (deprecated: definitions/routes.ts holds its sunset). */
export const getPetContract = defineOperation({
  operationId: 'getPet',
  description:
    'One pet by its id. `petId` is a plain decimal integer from 1 to 2^53−1 (`abc`, `0`, `01`, `-1`, `1.5` are a 400); a well-formed id with no pet is a 404.',
  request: { path: z.object({ petId: petIdPathSchema }) },
  parameters: {
    // The handler parses a plain decimal string with a regex and a transform, which JSON Schema cannot state; it yields this integer.
    petId: {
      description: 'The id of the pet: a plain decimal integer.',
      schema: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID },
    },
  },
  success: { status: 200, schema: petSchema, description: 'The pet.' },
  errorStatuses: [400, 404, 410],
  errorDescriptions: { 404: 'No pet has this id.' },
  samples: {
    curl: `curl -i ${CURL_AUTHORIZATION} \\\n  '${LOCAL_SERVER_URL}/pets/1'`,
    client: `${CLIENT_SETUP}\n\ntry {\n  const pet = await petStore.getPet(1);\n  console.log(pet.name);\n} catch (error) {\n  if (error instanceof PetStoreError && error.code === 'not_found') console.log('no pet 1');\n  else throw error;\n}`,
  },
});
