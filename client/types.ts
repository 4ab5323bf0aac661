import type { components, operations } from './openapi-types.ts';

/** The API's types, from the types openapi-typescript generated from openapi/openapi.json. */
export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
/** The Error object every error answer carries. */
export type ErrorObject = components['schemas']['ErrorObject'];
export type ErrorCode = ErrorObject['code'];
/** The query of listPets without the cursor: the client follows `Link: rel="next"` itself. */
export type ListPetsQuery = Omit<NonNullable<operations['listPets']['parameters']['query']>, 'cursor'>;
