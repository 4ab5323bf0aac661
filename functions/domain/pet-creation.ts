import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../runtime/clock';
import { ApiError, DependencyUnavailableError } from './errors';
import type { IdAllocator } from './id-allocator';
import { DEFAULT_STATUS, type NewPet, type Pet } from './pet';
import type { PetStore } from './pets';

/**
 * What "create once per Idempotency-Key" needs from storage (a port: the domain
 * declares it, functions/data/idempotency-repository.ts implements it on DynamoDB).
 */
export interface IdempotencyRecords {
  /** Stores `record` unless a live record with its id exists; returns the stored one (ours, or the earlier one). */
  claim(record: IdempotencyRecord): Promise<IdempotencyRecord>;
  /** Ends the hold of the record of this pet (if the record is still that pet's), so another attempt may finish it at once. */
  release(recordId: string, petId: number): Promise<void>;
  /** Marks the record of this pet COMPLETED. */
  complete(recordId: string, petId: number): Promise<void>;
}

/**
 * One record per API key and Idempotency-Key. It holds the whole pet (its id
 * included) from the start, so the pet write is the same write whoever makes it.
 */
export interface IdempotencyRecord {
  id: string;
  status: 'IN_PROGRESS' | 'COMPLETED';
  /** SHA-256 of the request body's fields: another body with the same key is a 422. */
  requestHash: string;
  pet: Pet;
  createdAt: string;
  /** Until this instant (ms) the attempt that claimed the record may still be writing the pet. */
  heldUntil: number;
  /** Unix seconds; the table's TTL attribute. */
  expiration: number;
}

export interface CreateRequest {
  /** Keys are remembered per API key: two clients may pick the same Idempotency-Key. */
  keyId: string;
  idempotencyKey?: string;
}

export interface PetCreationContext {
  pets: PetStore;
  records: IdempotencyRecords;
  /** One per container: its id block outlives a single request. */
  ids: IdAllocator;
  clock: Clock;
  /** How long an attempt may take (the function's timeout): how long its claim holds. */
  holdMs: number;
  /** How long an Idempotency-Key is remembered. */
  ttlSeconds: number;
}

/**
 * The create use case: a pet created at most once per Idempotency-Key, whatever
 * fails and whoever retries, and — the one place that decides it — what a
 * client is told when it cannot be known whether the pet was created.
 *
 * With a key:
 * 1. The pet is drafted with its id before anything is written.
 * 2. The record is claimed with the draft and a hold. If a record exists (ours,
 *    when the SDK repeated a claim whose answer it lost; or an earlier
 *    attempt's), its draft is adopted: the first body's pet, or a 422 for
 *    another body.
 * 3. The adopted pet is written with a condition that never overwrites and a
 *    write token naming the record: any attempt writes the same pet, and finding
 *    it already there is success.
 * 4. The record is marked COMPLETED (a shortcut for later replays only).
 *
 * A record another attempt holds (IN_PROGRESS, hold running) is a 409 unless
 * its pet is already stored: then the pet was created (only the COMPLETED mark
 * was lost) and the replay gets the original 201. An attempt that fails after
 * its claim may have landed releases the hold, so a retry finishes at once.
 *
 * The windows, in full: a record is remembered for `ttlSeconds` (24 h); a
 * duplicate gets 409 only while the first attempt is running and its pet not
 * yet stored, or — when that attempt died, or its release failed too — until
 * its hold ends (`holdMs` after its claim, the function's timeout).
 */
type DraftContext = Pick<PetCreationContext, 'pets' | 'ids' | 'clock'>;

/** The pet with its id, before anything is written. */
async function draftPet(input: NewPet, context: DraftContext): Promise<{ pet: Pet; createdAt: string }> {
  const pet: Pet = {
    id: await unknownOutcomeIfFails('unchanged', () => context.ids.nextId()),
    name: input.name,
    categoryId: input.categoryId,
    status: input.status ?? DEFAULT_STATUS,
  };
  return { pet, createdAt: new Date(context.clock()).toISOString() };
}

/**
 * A create without an Idempotency-Key (also how seeders and tests fill a table):
 * the write carries a token of this request, so a write the SDK repeats after
 * losing its answer is a success, not a conflict; when the answer stays lost,
 * the 503 says the outcome is unknown.
 */
export async function createPet(input: NewPet, context: DraftContext): Promise<Pet> {
  const draft = await draftPet(input, context);
  await unknownOutcomeIfFails('create_unknown', () => context.pets.insert(draft.pet, draft.createdAt, randomUUID()));
  return draft.pet;
}

export class PetCreation {
  constructor(private readonly context: PetCreationContext) {}

  /** The pet, and whether it was created by this request (false: a replay of an earlier attempt's pet). */
  async create(input: NewPet, request: CreateRequest): Promise<{ pet: Pet; created: boolean }> {
    if (request.idempotencyKey === undefined) return { pet: await createPet(input, this.context), created: true };
    return this.createOnce(input, request.keyId, request.idempotencyKey);
  }

  private async createOnce(input: NewPet, keyId: string, idempotencyKey: string): Promise<{ pet: Pet; created: boolean }> {
    const { records, clock } = this.context;
    const recordId = `createPet#${sha256(`${keyId}\n${idempotencyKey}`)}`;
    const requestHash = sha256(JSON.stringify(canonical(input)));
    const draft = await this.draft(input);
    const now = clock();
    const ours: IdempotencyRecord = {
      id: recordId,
      status: 'IN_PROGRESS',
      requestHash,
      pet: draft.pet,
      createdAt: draft.createdAt,
      heldUntil: now + this.context.holdMs,
      expiration: Math.floor(now / 1000) + this.context.ttlSeconds,
    };
    const record = await records.claim(ours).catch(async (error: unknown) => {
      // The claim may have landed (its answer lost): release it, so that a retry need not wait for the hold.
      if (error instanceof DependencyUnavailableError) await this.release(recordId, draft.pet.id);
      throw withOutcome(error, 'create_unknown_with_key');
    });
    const created = record.pet.id === draft.pet.id;
    if (record.requestHash !== requestHash) {
      throw new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request body; use a new key for a new pet.',
      );
    }
    if (record.status === 'COMPLETED') return { pet: record.pet, created };
    if (!created && record.heldUntil > clock()) await this.settleHeldElsewhere(record);
    else await this.writePet(record);
    await this.complete(record);
    return { pet: record.pet, created };
  }

  /** Another attempt holds the key: its pet already stored means only its COMPLETED mark was lost; else a 409. */
  private async settleHeldElsewhere(record: IdempotencyRecord): Promise<void> {
    const stored = await unknownOutcomeIfFails('create_unknown_with_key', () => this.context.pets.get(record.pet.id));
    if (!stored) {
      throw new ApiError('request_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.', 1);
    }
  }

  /** Writes the record's pet (the same write whoever makes it); when it may or may not be stored, the record is kept for the next attempt to settle at once. */
  private async writePet(record: IdempotencyRecord): Promise<void> {
    try {
      await this.context.pets.insert(record.pet, record.createdAt, record.id);
    } catch (error) {
      if (error instanceof DependencyUnavailableError) await this.release(record.id, record.pet.id);
      throw withOutcome(error, 'create_unknown_with_key');
    }
  }

  private draft(input: NewPet): Promise<{ pet: Pet; createdAt: string }> {
    return draftPet(input, this.context);
  }

  private async release(recordId: string, petId: number): Promise<void> {
    await this.context.records.release(recordId, petId).catch(() => {
      // Logged by the adapter; the hold then runs out by itself (the documented window).
    });
  }

  private async complete(record: IdempotencyRecord): Promise<void> {
    // The pet is stored: the client gets it. If this fails, a replay finds the pet and answers it.
    await this.context.records.complete(record.id, record.pet.id).catch(() => {});
  }
}

/**
 * Runs a step; a dependency failure in it becomes a 503 with this outcome. A
 * reservation of ids that failed created nothing (a block reserved but never
 * answered is skipped, never reused): 'unchanged'.
 */
async function unknownOutcomeIfFails<T>(outcome: 'unchanged' | 'create_unknown' | 'create_unknown_with_key', step: () => Promise<T>) {
  try {
    return await step();
  } catch (error) {
    throw withOutcome(error, outcome);
  }
}

function withOutcome(error: unknown, outcome: 'unchanged' | 'create_unknown' | 'create_unknown_with_key'): unknown {
  return error instanceof DependencyUnavailableError ? new DependencyUnavailableError(error.cause, outcome) : error;
}

function canonical(pet: NewPet): unknown[] {
  return [pet.name, pet.categoryId, pet.status ?? null];
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
