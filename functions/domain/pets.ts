import type { PetRepository } from '../data/pet-repository';
import type { Clock } from '../runtime/clock';
import { decodeCursor, encodeCursor } from './cursor';
import { ApiError } from './errors';
import type { IdAllocator } from './id-allocator';
import { DEFAULT_STATUS, type NewPet, type Pet, type PetStatus } from './pet';

export interface PetsContext {
  pets: PetRepository;
  clock: Clock;
}

export async function createPet(input: NewPet, context: PetsContext & { ids: IdAllocator }): Promise<Pet> {
  const pet: Pet = {
    id: await context.ids.nextId(),
    name: input.name,
    categoryId: input.categoryId,
    status: input.status ?? DEFAULT_STATUS,
  };
  await context.pets.insert(pet, new Date(context.clock()).toISOString());
  return pet;
}

export interface ListQuery {
  limit: number;
  status?: PetStatus;
  cursor?: string;
}

/** One page of pets in ascending id order, and the cursor of the next page if there is one. */
export async function listPets(query: ListQuery, context: PetsContext): Promise<{ pets: Pet[]; nextCursor?: string }> {
  const afterId = query.cursor === undefined ? 0 : decodeCursor(query.cursor, query.status).afterId;
  const { pets, hasMore } = await context.pets.listAfter(afterId, query.limit, query.status);
  const last = pets.at(-1);
  if (!hasMore || !last) return { pets };
  return { pets, nextCursor: encodeCursor({ afterId: last.id, status: query.status }) };
}

export async function findPet(id: number, context: PetsContext): Promise<Pet> {
  const pet = await context.pets.get(id);
  if (!pet) throw new ApiError('not_found', `Pet ${id} was not found.`);
  return pet;
}
