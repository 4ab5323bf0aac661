import type { Clock } from '../runtime/clock';
import { decodeCursor, encodeCursor } from './cursor';
import { ApiError } from './errors';
import type { Pet, PetStatus } from './pet';

/**
 * What getPet and createPet need from storage (a port: the domain declares it,
 * functions/data/pet-repository.ts implements it on DynamoDB).
 */
export interface PetStore {
  get(id: number): Promise<Pet | undefined>;
  /** Writes a pet that must not exist yet; a repeat with the same writeToken finds its own pet and succeeds. */
  insert(pet: Pet, createdAt: string, writeToken: string): Promise<void>;
}

/** Pages of the lists (functions/domain/pet-list.ts is the use case that reads them). */
export interface PetPages {
  /**
   * Up to `limit` pets with an id above `afterId`, ascending, and, when more may
   * follow, the id the next page starts after: at or past the last pet's, below
   * the next pet (no pet existed in between when the page was read; one created
   * since is a pet created during the walk), or past the blocks read when the
   * walk stopped short of `limit` to bound one page's work. Every pet whose
   * create answered before `walkStartedAt` (ms, the service's clock) is among
   * those read; a pet created since may be missing (docs/clients.md).
   */
  listAfter(afterId: number, limit: number, status: PetStatus | undefined, walkStartedAt?: number): Promise<PetPage>;
}

export interface PetPage {
  pets: Pet[];
  nextAfterId?: number;
}

export interface PetsContext {
  pets: PetStore;
  clock: Clock;
}

export interface ListContext {
  list: PetPages;
  clock: Clock;
}

export interface ListQuery {
  limit: number;
  status?: PetStatus;
  cursor?: string;
}

/** One page of pets in ascending id order, and the cursor of the next page if there is one. */
export async function listPets(query: ListQuery, context: ListContext): Promise<{ pets: Pet[]; nextCursor?: string }> {
  const position = query.cursor === undefined ? undefined : decodeCursor(query.cursor, query.status, context.clock());
  // A walk sees every pet created before its first page was asked for; the cursor carries that instant on.
  const walkStartedAt = position?.walkStartedAt ?? context.clock();
  const { pets, nextAfterId } = await context.list.listAfter(position?.afterId ?? 0, query.limit, query.status, walkStartedAt);
  if (nextAfterId === undefined) return { pets };
  return { pets, nextCursor: encodeCursor({ afterId: nextAfterId, status: query.status, walkStartedAt }) };
}

export async function findPet(id: number, context: PetsContext): Promise<Pet> {
  const pet = await context.pets.get(id);
  if (!pet) throw new ApiError('not_found', `Pet ${id} was not found.`);
  return pet;
}
