import { BatchGetCommand, type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoCall } from './dynamo-errors';
import {
  BLOCK_COUNTER_ID,
  blockOf,
  COUNTER_START_GAP_BLOCKS,
  type CounterBlocks,
  type EarlyBlocks,
  frontierCopyId,
  LEGACY_ALLOCATOR_ID,
  type PetLayout,
  stripeItemId,
} from './pet-layout';

/**
 * The items that say which id blocks exist (functions/data/pet-layout.ts): the
 * block counter, its copies, and the allocator items of the early blocks.
 * Reads and writes them; what they mean is the layout's.
 */
export class BlockCounter {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly layout: PetLayout,
    /** Which copy a reader reads; at random by default. */
    private readonly pickCopy: (copies: number) => number = (copies) => Math.floor(Math.random() * copies),
  ) {}

  /**
   * Hands out the next block: one more on the counter, then its value written
   * to every copy (a copy already past it stays), so that any reader who reads
   * a copy after this returns knows the block. A failure leaves the block
   * unused: its ids are skipped, never handed out.
   */
  async reserve(): Promise<number> {
    const counter = await this.advance();
    await Promise.all(Array.from({ length: this.layout.frontierCopies }, (_, copy) => this.publish(copy, counter)));
    return counter.top;
  }

  /** The counter's value as one copy holds it (a strongly consistent read: every reservation answered before is in it), or undefined before the first. */
  async readCopy(): Promise<CounterBlocks | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { id: frontierCopyId(this.pickCopy(this.layout.frontierCopies)) },
          ConsistentRead: true,
        }),
      ),
    );
    return Item?.top === undefined ? undefined : { from: Number(Item.from), top: Number(Item.top) };
  }

  /** Which blocks the allocators before the counter handed out (migration, until 2027-06-30: nothing in this version reserves on them). */
  async readEarlyBlocks(consistent = false): Promise<EarlyBlocks> {
    const ids = [LEGACY_ALLOCATOR_ID, ...Array.from({ length: this.layout.stripeCount }, (_, s) => stripeItemId(s))];
    const { Responses } = await dynamoCall(() =>
      this.db.send(
        new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: ids.map((id) => ({ id })), ConsistentRead: consistent } } }),
      ),
    );
    const early: EarlyBlocks = { legacyLastBlock: -1, stripeRanges: [] };
    for (const item of Responses?.[this.tableName] ?? []) {
      const id = Number(item.id);
      if (id === LEGACY_ALLOCATOR_ID) {
        early.legacyLastBlock = blockOf(Number(item.lastReservedId ?? 0), this.layout);
        continue;
      }
      early.stripeRanges.push({ stripe: -1 - id, base: Number(item.base ?? 0), reserved: Number(item.reserved ?? 0) });
    }
    return early;
  }

  private async advance(): Promise<CounterBlocks> {
    try {
      return await this.add();
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      // The table's first reservation on the counter: it starts above every early block.
      await this.start();
      return this.add();
    }
  }

  private async add(): Promise<CounterBlocks> {
    const { Attributes } = await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id: BLOCK_COUNTER_ID },
          UpdateExpression: 'ADD #top :one',
          ConditionExpression: 'attribute_exists(#top)',
          ExpressionAttributeNames: { '#top': 'top' },
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return { from: Number(Attributes?.from), top: Number(Attributes?.top) };
  }

  /**
   * Sets the counter just below its first block: the first of a fresh table, or
   * COUNTER_START_GAP_BLOCKS above every early block (pet-layout.ts). A start
   * that raced with ours keeps its value.
   */
  private async start(): Promise<void> {
    const early = await this.readEarlyBlocks(true);
    const S = this.layout.stripeCount;
    // A stripe's `reserved` counts its blocks, used or skipped (a migration may set it past blocks never used).
    const stripeTops = early.stripeRanges.map((range) => (range.reserved > 0 ? (range.reserved - 1) * S + range.stripe : -1));
    const highest = Math.max(early.legacyLastBlock, ...stripeTops);
    const below = highest < 0 ? -1 : highest + COUNTER_START_GAP_BLOCKS;
    await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id: BLOCK_COUNTER_ID },
          UpdateExpression: 'SET #top = if_not_exists(#top, :below), #from = if_not_exists(#from, :from)',
          ExpressionAttributeNames: { '#top': 'top', '#from': 'from' },
          ExpressionAttributeValues: { ':below': below, ':from': below + 1 },
        }),
      ),
    );
  }

  private async publish(copy: number, counter: CounterBlocks): Promise<void> {
    await dynamoCall(
      () =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { id: frontierCopyId(copy) },
            UpdateExpression: 'SET #top = :top, #from = :from',
            ConditionExpression: 'attribute_not_exists(#top) OR #top < :top',
            ExpressionAttributeNames: { '#top': 'top', '#from': 'from' },
            ExpressionAttributeValues: { ':top': counter.top, ':from': counter.from },
          }),
        ),
      // A later block's reservation got there first: the copy already says more.
    ).catch(ignoreConditionFailed);
  }
}

function ignoreConditionFailed(error: unknown): void {
  if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
}
