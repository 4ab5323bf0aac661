import { randomUUID } from 'node:crypto';
import type { Clock } from '../runtime/clock';
import { decodeCursor, encodeCursor } from './cursor';
import { ApiError, DependencyUnavailableError } from './errors';
import type { IdAllocator } from './id-allocator';
import { DEFAULT_STATUS, type NewPet, type Pet, type PetStatus } from './pet';

/**
 * What the pet operations need from storage (a port: the domain declares it,
 * functions/data/pet-repository.ts implements it on DynamoDB).
 */
export interface PetStore {
  get(id: number): Promise<Pet | undefined>;
  /** Writes a pet that must not exist yet; a repeat with the same writeToken finds its own pet and succeeds. */
  insert(pet: Pet, createdAt: string, writeToken: string): Promise<void>;
  /** Up to `limit` pets with an id above `afterId`, ascending, and whether more follow. */
  listAfter(afterId: number, limit: number, status: PetStatus | undefined): Promise<{ pets: Pet[]; hasMore: boolean }>;
}

export interface PetsContext {
  pets: PetStore;
  clock: Clock;
}

/** A pet about to be written: its id is fixed before the write, so every attempt writes the same pet. */
export interface PetDraft {
  pet: Pet;
  createdAt: string;
}

export async function draftPet(input: NewPet, context: { ids: IdAllocator; clock: Clock }): Promise<PetDraft> {
  const pet: Pet = {
    id: await context.ids.nextId(),
    name: input.name,
    categoryId: input.categoryId,
    status: input.status ?? DEFAULT_STATUS,
  };
  return { pet, createdAt: new Date(context.clock()).toISOString() };
}

/**
 * Creates a pet without an Idempotency-Key. The write carries a token of this
 * request, so a write the SDK repeats after losing its answer is a success, not
 * a conflict. When the answer stays lost, the 503 says the outcome is unknown.
 */
export async function createPet(input: NewPet, context: PetsContext & { ids: IdAllocator }): Promise<Pet> {
  const draft = await draftPet(input, context);
  try {
    await context.pets.insert(draft.pet, draft.createdAt, randomUUID());
  } catch (error) {
    if (error instanceof DependencyUnavailableError) throw new DependencyUnavailableError(error.cause, 'create_unknown');
    throw error;
  }
  return draft.pet;
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
