import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BlockCounter } from '../../functions/data/block-counter';
import { type PetLayout, petLayout } from '../../functions/data/pet-layout';
import { PetRepository } from '../../functions/data/pet-repository';
import { IdAllocator } from '../../functions/domain/id-allocator';
import type { PetStatus } from '../../functions/domain/pet';
import { PetList, type PetListOptions } from '../../functions/domain/pet-list';
import type { PetPage, PetPages } from '../../functions/domain/pets';

export interface CountingPetListOptions extends Partial<PetListOptions> {
  /** Which copy of the block counter a read goes to; at random by default. */
  pickCopy?: (copies: number) => number;
}

/**
 * One instance's list use case on DynamoDB, as listPets builds it, with its
 * reads counted at its ports: the Queries of blocks and the reads of which
 * blocks exist (a copy of the block counter). Tests and the bench measure them;
 * the service's own code counts nothing.
 */
export class CountingPetList implements PetPages {
  queriesSent = 0;
  frontierReadsSent = 0;
  private readonly list: PetList;

  constructor(db: DynamoDBDocumentClient, tableName: string, options: CountingPetListOptions = {}) {
    const layout = options.layout ?? petLayout;
    const pets = new PetRepository(db, tableName, { layout });
    const counter = new BlockCounter(db, tableName, layout, options.pickCopy);
    this.list = new PetList(
      {
        queryBlock: (...query) => {
          this.queriesSent++;
          return pets.queryBlock(...query);
        },
      },
      {
        readCounterCopy: () => {
          this.frontierReadsSent++;
          return counter.readCounterCopy();
        },
      },
      { ...options, layout, clock: options.clock ?? Date.now },
    );
  }

  listAfter(afterId: number, limit: number, status: PetStatus | undefined, walkStartedAt?: number): Promise<PetPage> {
    return this.list.listAfter(afterId, limit, status, walkStartedAt);
  }
}

/** A create instance's id allocator, as createPet builds it: blocks reserved on the table's block counter. */
export function idAllocatorOn(
  db: DynamoDBDocumentClient,
  tableName: string,
  layout: PetLayout = petLayout,
  lifetime?: { clock: () => number; lifetimeMs: number },
): IdAllocator {
  const blocks = new BlockCounter(db, tableName, layout);
  return new IdAllocator((count) => blocks.reserveIds(count), layout.blockSize, lifetime);
}
