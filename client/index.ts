/** The typed client of the Pet Store API v1. */
export { isErrorObject, PetStoreError, parseRetryAfterSeconds, UnexpectedResponseError } from './errors.ts';
export { linkTarget } from './link-header.ts';
export type { components, operations, paths } from './openapi-types.ts';
export { type OperationId, type PetPage, PetStoreClient, type PetStoreClientOptions, type RetryEvent } from './pet-store-client.ts';
export { decideRetry, defaultRetryPolicy, fullJitter, type RetryPolicy, type RetryState } from './retry-policy.ts';
export type { ErrorCode, ErrorObject, ListPetsQuery, NewPet, Pet, PetStatus } from './types.ts';
