import { ConditionalCheckFailedException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { appliedNothing, isDependencyFailure } from '../../functions/data/dynamo-errors';
import { DependencyUnavailableError } from '../../functions/domain/errors';

/**
 * What the client can know decides the class: only an answer DynamoDB gave in
 * full, naming a client error of ours, is not a dependency failure.
 */
const metadata = { httpStatusCode: 400, attempts: 2, totalRetryDelay: 50 };

it.each([
  // #21 defect 1, as logged: the body of a 400 reset while it was read (its status line was).
  ['a reset while a 400 body was read', Object.assign(new Error('aborted'), { code: 'ECONNRESET', $metadata: metadata })],
  [
    'a truncated 200 body',
    Object.assign(new SyntaxError('Unexpected end of JSON input'), { $metadata: { ...metadata, httpStatusCode: 200 } }),
  ],
  [
    'a body that stalled after its headers',
    Object.assign(new Error('stopped after its headers'), { name: 'TimeoutError', $metadata: metadata }),
  ],
  ['no answer at all', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
  ['a 500', Object.assign(new Error('Internal'), { name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 500 } })],
  ['throttling', Object.assign(new Error('slow down'), { name: 'ThrottlingException', $fault: 'client', $metadata: metadata })],
  [
    'a conflicting transaction',
    Object.assign(new Error('conflict'), { name: 'TransactionConflictException', $fault: 'client', $metadata: metadata }),
  ],
])('%s is a dependency failure (503)', (_name, error) => {
  expect(isDependencyFailure(error)).toBe(true);
});

it.each([
  ['a failed condition', new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: metadata })],
  ['a missing table (a deployment fault)', new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: metadata })],
  ['a bug of ours before anything was sent', new TypeError('x is not a function')],
])('%s is not (500, or handled by the caller)', (_name, error) => {
  expect(isDependencyFailure(error)).toBe(false);
});

// What a write's failure says of the write: only DynamoDB's "slow down" or "busy", answered in full, applied nothing
// ("Error handling with DynamoDB", Amazon DynamoDB Developer Guide); a lost or cut answer, or a 500, may follow an applied write.
it.each([
  ['throughput exceeded', 'ProvisionedThroughputExceededException', true],
  ['throttling', 'ThrottlingException', true],
  ['a conflicting transaction', 'TransactionConflictException', true],
  ['a timeout', 'TimeoutError', false],
  ['a 500', 'InternalServerError', false],
])('%s: the write applied nothing is %s', (_name, errorName, nothing) => {
  const cause = Object.assign(new Error(errorName), { name: errorName, $metadata: metadata });
  expect(appliedNothing(new DependencyUnavailableError(cause))).toBe(nothing);
  expect(appliedNothing(cause)).toBe(nothing);
});
