import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CounterCopies } from '../domain/list-ports';
import { dynamoCall } from './dynamo-errors';
import { BLOCK_COUNTER_ID, type CounterBlocks, firstIdOf, frontierCopyId, type PetLayout } from './pet-layout';

/**
 * The items that say which id blocks exist (functions/data/pet-layout.ts): the
 * block counter and its copies. Reads and writes them; what they mean is the layout's.
 * createPet reserves blocks on it; listPets reads a copy (the CounterCopies port).
 */
export class BlockCounter implements CounterCopies {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly layout: PetLayout,
    /** Which copy a reader reads; at random by default. */
    private readonly pickCopy: (copies: number) => number = (copies) => Math.floor(Math.random() * copies),
  ) {}

  /**
   * Reserves a block of `count` fresh ids (count must be the layout's block
   * size), above every block handed out before, and returns its first id: one
   * more on the counter, then its value written to every other copy (a copy already
   * past it stays), so that any reader who reads a copy after this returns
   * knows the block. A failure leaves the block unused: its ids are skipped,
   * never handed out or reused.
   */
  async reserveIds(count: number): Promise<number> {
    if (count !== this.layout.blockSize) throw new Error(`Id blocks hold ${this.layout.blockSize} ids, not ${count}`);
    const top = await this.advance();
    // Copy 0 is the counter itself (pet-layout.ts): written already.
    await Promise.all(Array.from({ length: this.layout.frontierCopies - 1 }, (_, copy) => this.publish(copy + 1, top)));
    return firstIdOf(top, this.layout);
  }

  /** The counter's value as one copy (maybe the counter) holds it (a strongly consistent read: every reservation answered before is in it), or undefined before the first. */
  async readCounterCopy(): Promise<CounterBlocks | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { id: frontierCopyId(this.pickCopy(this.layout.frontierCopies)) },
          ConsistentRead: true,
        }),
      ),
    );
    return Item?.top === undefined ? undefined : { top: Number(Item.top) };
  }

  /**
   * One more block on the counter; a new table's first is block 0 (ids 1 … blockSize).
   * SET with if_not_exists and `+` in one action: "Using update expressions in DynamoDB",
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
   */
  private async advance(): Promise<number> {
    const { Attributes } = await dynamoCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id: BLOCK_COUNTER_ID },
          UpdateExpression: 'SET #top = if_not_exists(#top, :none) + :one',
          ExpressionAttributeNames: { '#top': 'top' },
          ExpressionAttributeValues: { ':none': -1, ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    return Number(Attributes?.top);
  }

  private async publish(copy: number, top: number): Promise<void> {
    await dynamoCall(
      () =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { id: frontierCopyId(copy) },
            UpdateExpression: 'SET #top = :top',
            ConditionExpression: 'attribute_not_exists(#top) OR #top < :top',
            ExpressionAttributeNames: { '#top': 'top' },
            ExpressionAttributeValues: { ':top': top },
          }),
        ),
      // A later block's reservation got there first: the copy already says more.
    ).catch(ignoreConditionFailed);
  }
}

function ignoreConditionFailed(error: unknown): void {
  if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
}
