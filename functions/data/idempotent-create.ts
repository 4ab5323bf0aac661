import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { IDEMPOTENCY_TTL_SECONDS } from '../../definitions/operations/create-pet';
import { ApiError, DependencyUnavailableError } from '../domain/errors';
import type { NewPet, Pet } from '../domain/pet';
import type { PetDraft } from '../domain/pets';
import type { Clock } from '../runtime/clock';
import { logger } from '../runtime/logger';
import { dynamoCall } from './dynamo-errors';

export interface IdempotentCreateRequest {
  /** Keys are remembered per API key: two clients may pick the same Idempotency-Key. */
  keyId: string;
  idempotencyKey: string;
  pet: NewPet;
}

/**
 * One record per API key and Idempotency-Key, in the idempotency table. It
 * holds the whole pet (its id included) from the start, so that the pet write
 * is the same write whoever makes it. It is never deleted: it expires by TTL.
 */
interface IdempotencyRecord {
  id: string;
  status: 'IN_PROGRESS' | 'COMPLETED';
  /** SHA-256 of the request body's fields: another body with the same key is a 422. */
  requestHash: string;
  pet: Pet;
  createdAt: string;
  /**
   * Until this instant (ms) the attempt that claimed the record may still be
   * writing the pet: a duplicate gets 409 (decision 11). The attempt releases
   * it when its pet write fails; otherwise it runs out with the function's timeout.
   */
  leaseUntil: number;
  /** Unix seconds; the table's TTL attribute. */
  expiration: number;
}

/**
 * Creates a pet at most once per Idempotency-Key, whatever fails and whoever retries:
 *
 * 1. The pet is drafted with its id before anything is written.
 * 2. The record is claimed with a conditional PutItem carrying the draft and a
 *    lease. If a record exists (ours, when the SDK repeated a claim whose answer
 *    it lost; or an earlier attempt's), its draft is adopted: the first body's
 *    pet, or a 422 for another body, or a 409 while another attempt holds the lease.
 * 3. The adopted pet is written with a condition that never overwrites and a
 *    write token naming the record: any attempt, now or in a later retry,
 *    writes the same pet, and finding it already there is success.
 * 4. The record is marked COMPLETED (a shortcut for later replays only).
 *
 * Nothing is ever undone on a failure: a failure before step 3 created no pet;
 * a failure in step 3 leaves an outcome the next attempt with the same key
 * settles by repeating step 3 (the failing attempt releases its lease so that
 * the next one need not wait).
 *
 * Why not TransactWriteItems with a ClientRequestToken: the token makes
 * identical calls idempotent only for 10 minutes after the first completes,
 * and the response carries no item to tell a repeat from a conflict
 * ("TransactWriteItems", Amazon DynamoDB API Reference,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html);
 * a client's retry comes through another request, maybe another container,
 * maybe later. The conditions above cover both, with one write per step.
 * A conditional write returns the item that failed its condition when asked
 * (ReturnValuesOnConditionCheckFailure: ALL_OLD, "PutItem", same reference,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html).
 */
export class IdempotentCreate {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly draft: (input: NewPet) => Promise<PetDraft>,
    private readonly writePet: (draft: PetDraft, writeToken: string) => Promise<void>,
    private readonly clock: Clock,
    /** How long an attempt may take: the function's timeout. */
    private readonly leaseMs: number,
  ) {}

  /** The pet, and whether this attempt drafted it (false: a replay of an earlier attempt's pet). */
  async create(request: IdempotentCreateRequest): Promise<{ pet: Pet; drafted: boolean }> {
    const recordId = `createPet#${sha256(`${request.keyId}\n${request.idempotencyKey}`)}`;
    const requestHash = sha256(JSON.stringify(canonical(request.pet)));
    const draft = await this.draft(request.pet);
    const record = await this.claim(recordId, requestHash, draft).catch((error: unknown) => {
      // The claim may have landed: this key may now be bound to this body.
      throw error instanceof DependencyUnavailableError ? new DependencyUnavailableError(error.cause, 'create_unknown_with_key') : error;
    });
    const drafted = record.pet.id === draft.pet.id;
    if (record.requestHash !== requestHash) {
      throw new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request body; use a new key for a new pet.',
      );
    }
    if (record.status === 'COMPLETED') return { pet: record.pet, drafted };
    if (!drafted && record.leaseUntil > this.clock()) {
      throw new ApiError('request_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.', 1);
    }
    try {
      await this.writePet({ pet: record.pet, createdAt: record.createdAt }, recordId);
    } catch (error) {
      if (!(error instanceof DependencyUnavailableError)) throw error;
      // The pet may or may not be stored: keep the record, let the next attempt settle it at once.
      await this.release(record);
      throw new DependencyUnavailableError(error.cause, 'create_unknown_with_key');
    }
    await this.complete(record);
    return { pet: record.pet, drafted };
  }

  /** Stores the record with this draft, or returns the record already there. */
  private async claim(recordId: string, requestHash: string, draft: PetDraft): Promise<IdempotencyRecord> {
    const nowSeconds = Math.floor(this.clock() / 1000);
    const record: IdempotencyRecord = {
      id: recordId,
      status: 'IN_PROGRESS',
      requestHash,
      pet: draft.pet,
      createdAt: draft.createdAt,
      leaseUntil: this.clock() + this.leaseMs,
      expiration: nowSeconds + IDEMPOTENCY_TTL_SECONDS,
    };
    try {
      await dynamoCall(() =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: record,
            // TTL deletion lags expiry (up to a few days), so an expired record counts as absent.
            ConditionExpression: 'attribute_not_exists(id) OR expiration < :now',
            ExpressionAttributeValues: { ':now': nowSeconds },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return record;
    } catch (error) {
      const existing = (error as { Item?: Record<string, AttributeValue> }).Item;
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException' && existing) {
        // Ours (the SDK repeated the claim) or an earlier attempt's: either way, the stored one.
        return unmarshall(existing) as IdempotencyRecord;
      }
      throw error;
    }
  }

  private async release(record: IdempotencyRecord): Promise<void> {
    await this.updateRecord(record, 'SET leaseUntil = :zero', { ':zero': 0 }).catch((error: unknown) =>
      logger.warn('idempotency lease not released; it runs out with the function timeout', {
        error: error instanceof Error ? error : String(error),
      }),
    );
  }

  private async complete(record: IdempotencyRecord): Promise<void> {
    // The pet is stored: the client gets it. If this fails, a later replay finds
    // the record in progress and repeats the (idempotent) pet write instead.
    await this.updateRecord(record, 'SET #status = :completed', { ':completed': 'COMPLETED' }, { '#status': 'status' }).catch(
      (error: unknown) => logger.warn('idempotency record not marked completed', { error: error instanceof Error ? error : String(error) }),
    );
  }

  private async updateRecord(
    record: IdempotencyRecord,
    expression: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id: record.id },
          UpdateExpression: expression,
          // Only the record of this pet: never one that expired and was claimed anew.
          ConditionExpression: 'pet.id = :petId',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ...values, ':petId': record.pet.id },
        }),
      ),
    );
  }
}

function canonical(pet: NewPet): unknown[] {
  return [pet.name, pet.categoryId, pet.status ?? null];
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
