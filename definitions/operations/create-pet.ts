import { newPetSchema } from '../../functions/domain/pet';
import { defineOperation } from './operation-contract';
import { petSchema } from './pet-schemas';

/** Largest request body we accept (decision 12); API Gateway's own limit is 10 MB. */
export const MAX_BODY_BYTES = 16 * 1024;
/** How long an Idempotency-Key is remembered, per API key (decision 11). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/** POST /pets: adds a pet; the Idempotency-Key header (functions/domain/idempotency-key.ts) makes retries safe. */
export const createPetContract = defineOperation({
  operationId: 'createPet',
  request: { body: newPetSchema },
  success: { status: 201, schema: petSchema, description: 'The pet, created (or, for a replayed Idempotency-Key, the pet first created).' },
  errorStatuses: [400, 409, 413, 415, 422],
  limits: { MAX_BODY_BYTES, IDEMPOTENCY_TTL_SECONDS },
});
