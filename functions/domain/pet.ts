import type { PetStatus } from '../../definitions/fields/pet-fields';

// The field rules are the contract's (definitions/fields/): re-exported for the domain's own modules.
export {
  DEFAULT_STATUS,
  MAX_ID,
  NAME_MAX_CODE_POINTS,
  type NewPet,
  newPetSchema,
  type PetStatus,
  petStatuses,
  petStatusSchema,
} from '../../definitions/fields/pet-fields';
export { unreadableTextReason } from '../../definitions/fields/readable-text';

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

/** The Animal object of the interface, with its fields in their documented order. */
export function toPetBody(pet: Pet): Pet {
  return { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status };
}
