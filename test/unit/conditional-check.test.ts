import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { itemThatFailedCondition } from '../../functions/data/conditional-check';

/** What the repositories read back from a failed conditional write (ReturnValuesOnConditionCheckFailure: ALL_OLD). */
const metadata = { httpStatusCode: 400 };

it('gives the item a failed condition returned, unmarshalled', () => {
  const error = new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: metadata,
    Item: { id: { N: '7' }, writeToken: { S: 'token-1' } },
  });
  expect(itemThatFailedCondition(error)).toEqual({ id: 7, writeToken: 'token-1' });
});

it('gives nothing for a failed condition that returned no item', () => {
  expect(itemThatFailedCondition(new ConditionalCheckFailedException({ message: 'failed', $metadata: metadata }))).toBeUndefined();
});

it('gives nothing for any other error, whatever it carries', () => {
  const other = Object.assign(new TransactionCanceledException({ message: 'cancelled', $metadata: metadata }), {
    Item: { id: { N: '7' } },
  });
  expect(itemThatFailedCondition(other)).toBeUndefined();
  expect(itemThatFailedCondition({ name: 'ConditionalCheckFailedException', Item: { id: { N: '7' } } })).toBeUndefined();
});
