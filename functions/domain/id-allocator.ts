import { MAX_ID } from './pet';

/**
 * Hands out pet ids from blocks reserved in DynamoDB, so that a create costs
 * 1/blockSize of an allocator write instead of one. Ids are unique (each block
 * is reserved atomically), never reused, and increasing within a container;
 * across containers they interleave by block, hence "roughly increasing".
 * Safe for concurrent callers in one process: one reservation at a time.
 *
 * With a `lifetimeMs`, a block is given up that long after its reservation,
 * used up or not (its other ids are skipped), so that readers know when no new
 * pet can appear in it any more (functions/domain/id-blocks.ts, sealed blocks).
 */
export class IdAllocator {
  private next = 0;
  private end = 0;
  private reservedAt = 0;
  private pending: Promise<void> | undefined;

  constructor(
    private readonly reserveBlock: (count: number) => Promise<number>,
    readonly blockSize: number = 100,
    private readonly lifetime: { clock: () => number; lifetimeMs: number } | undefined = undefined,
  ) {}

  async nextId(): Promise<number> {
    if (this.lifetime && this.lifetime.clock() - this.reservedAt >= this.lifetime.lifetimeMs) this.end = this.next;
    while (this.next >= this.end) {
      this.pending ??= this.refill().finally(() => {
        this.pending = undefined;
      });
      await this.pending;
    }
    return this.next++;
  }

  private async refill(): Promise<void> {
    const reservedAt = this.lifetime?.clock() ?? 0;
    const first = await this.reserveBlock(this.blockSize);
    const end = first + this.blockSize;
    if (!Number.isSafeInteger(first) || first < 1 || end - 1 > MAX_ID) {
      throw new Error(`Id allocator returned an unusable block starting at ${first}`);
    }
    this.next = first;
    this.end = end;
    this.reservedAt = reservedAt;
  }
}
