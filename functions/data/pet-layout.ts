import { blockOf, type PetLayout, shardOf } from '../domain/id-blocks';
import type { Pet, PetStatus } from '../domain/pet';

export * from '../domain/id-blocks';

/*
 * How id blocks and lists are stored in the pets table (functions/domain/id-blocks.ts says what
 * blocks are): the items that say which blocks exist, and the list shards' partition-key values.
 */

/** The block counter: `top`, the newest block handed out (ids no pet can have: pet ids are ≥ 1). */
export const BLOCK_COUNTER_ID = -100;
/** The items readers read the counter's value from: copy 0 is the counter itself, copies 1 … frontierCopies − 1 beside it. */
export const frontierCopyId = (copy: number): number => BLOCK_COUNTER_ID - copy;

/**
 * The partition-key value of a block in the list of all pets, or of pets with
 * one status; in a namespace (the deployment check's pets), behind its name, a
 * value no customer's list queries.
 */
export function shardKey(block: number, status: PetStatus | undefined, layout: PetLayout, namespace?: string): string {
  const shard = String(shardOf(block, layout));
  const key = status === undefined ? shard : `${status}#${shard}`;
  return namespace === undefined ? key : `${namespace}#${key}`;
}

/** The index keys of a pet: its block's shard in the list of all pets and in its status's list. */
export function shardAttributes(
  pet: Pick<Pet, 'id' | 'status'>,
  layout: PetLayout,
  namespace?: string,
): { listShard: string; statusShard: string } {
  const block = blockOf(pet.id, layout);
  return { listShard: shardKey(block, undefined, layout, namespace), statusShard: shardKey(block, pet.status, layout, namespace) };
}
