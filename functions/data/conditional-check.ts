import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoCall } from './dynamo-errors';

/**
 * Writes `input.Item` unless its condition fails. When it fails, DynamoDB
 * returns the item in the way (ReturnValuesOnConditionCheckFailure: ALL_OLD,
 * "PutItem", Amazon DynamoDB API Reference,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html),
 * and `accepts` decides, without a second read, whether that item will do: a
 * repeat of our own write (the SDK's retry after a lost answer) finds our item.
 * Returns the stored item: ours, or the one accepted. Any other failure is
 * thrown as it came (a dependency failure as DependencyUnavailableError).
 */
export async function conditionalPut<Item extends NonNullable<PutCommandInput['Item']>>(
  db: DynamoDBDocumentClient,
  input: Omit<PutCommandInput, 'Item' | 'ConditionExpression' | 'ReturnValuesOnConditionCheckFailure'> & {
    Item: Item;
    ConditionExpression: string;
  },
  accepts: (itemInTheWay: Item) => boolean,
): Promise<Item> {
  try {
    await dynamoCall(() => db.send(new PutCommand({ ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })));
    return input.Item;
  } catch (error) {
    const inTheWay = itemThatFailedCondition<Item>(error);
    if (inTheWay !== undefined && accepts(inTheWay)) return inTheWay;
    throw error;
  }
}

/**
 * The item a conditional write that asked for it (ReturnValuesOnConditionCheckFailure)
 * found in its way; undefined for any other error, and for a failed condition
 * that returned no item. The document client does not unmarshall the item of
 * an error, so it is done here; `Item` names what the table holds, as the caller knows it.
 */
export function itemThatFailedCondition<Item = Record<string, unknown>>(error: unknown): Item | undefined {
  if (!(error instanceof Error) || error.name !== 'ConditionalCheckFailedException') return undefined;
  const item = (error as { Item?: Record<string, AttributeValue> }).Item;
  return item ? (unmarshall(item) as Item) : undefined;
}
