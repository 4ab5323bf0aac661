import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
} from '@aws-lambda-powertools/idempotency';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { IDEMPOTENCY_TTL_SECONDS } from '../../definitions/operations/create-pet';
import { ApiError, DependencyUnavailableError } from '../domain/errors';
import type { NewPet, Pet } from '../domain/pet';

export interface IdempotentCreateRequest {
  /** Keys are remembered per API key: two clients may pick the same Idempotency-Key. */
  keyId: string;
  idempotencyKey: string;
  pet: NewPet;
}

/**
 * Wraps a create so that a retry with the same Idempotency-Key and body returns
 * the first result and creates nothing (Powertools for AWS Lambda idempotency,
 * records in DynamoDB). Its errors become our codes: another body → 422, the
 * first request still running → 409, the record store failing → 503.
 */
export function idempotentCreate(
  create: (pet: NewPet) => Promise<Pet>,
  db: DynamoDBDocumentClient,
  tableName: string,
): (request: IdempotentCreateRequest, context: Context) => Promise<Pet> {
  // The context lets Powertools expire an in-progress record when the Lambda would time out.
  const once = makeIdempotent((request: IdempotentCreateRequest, _context: Context) => create(request.pet), {
    persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: db }),
    config: new IdempotencyConfig({
      eventKeyJmesPath: '[keyId, idempotencyKey]',
      payloadValidationJmesPath: 'pet',
      expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
    }),
  });
  return async (request, context) => {
    try {
      return await once(request, context);
    } catch (error) {
      throw translate(error);
    }
  };
}

function translate(error: unknown): unknown {
  if (error instanceof IdempotencyValidationError) {
    return new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body; use a new key for a new pet.');
  }
  if (error instanceof IdempotencyAlreadyInProgressError) {
    return new ApiError('request_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.', 1);
  }
  if (error instanceof IdempotencyPersistenceLayerError) return new DependencyUnavailableError(error);
  return error;
}
