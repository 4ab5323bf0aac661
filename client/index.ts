/** The typed client of the Pet Store API v1. */
export { isErrorObject, parseRetryAfterSeconds, PetStoreError, UnexpectedResponseError } from './errors';
export { linkTarget } from './link-header';
export { type OperationId, type PetPage, PetStoreClient, type PetStoreClientOptions, type RetryEvent } from './pet-store-client';
export { decideRetry, defaultRetryPolicy, fullJitter, type RetryPolicy, type RetryState } from './retry-policy';
export type { ErrorCode, ErrorObject, ListPetsQuery, NewPet, Pet, PetStatus } from './types';
export type { components, operations, paths } from './openapi-types';
