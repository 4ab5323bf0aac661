import type { OperationId } from '../routes';
import { createPetContract } from './create-pet';
import { getPetContract } from './get-pet';
import { listPetsContract } from './list-pets';
import type { OperationContract } from './operation-contract';

/**
 * Every operation's contract, keyed by operationId so none is forgotten. For the
 * generator and the tests; a handler imports only its own file (smaller bundle).
 */
export const operationContracts: Record<OperationId, OperationContract> = {
  listPets: listPetsContract,
  createPet: createPetContract,
  getPet: getPetContract,
};
