import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { DependencyUnavailableError } from '../domain/errors';

/** DynamoDB says "slow down" or "busy": the request may succeed later. */
const retryLaterErrors = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  // Another transaction holds the item ("Error handling with DynamoDB",
  // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html).
  'TransactionConflictException',
]);

/**
 * Whether an error means DynamoDB was unreachable, too slow, busy, or failing
 * on its side (answered 503, retry later) rather than a bug of ours such as a
 * malformed request (answered 500).
 *
 * Classified by what the client can know: only an answer DynamoDB gave in full
 * and that names a client error of ours (ValidationException,
 * ResourceNotFoundException, AccessDeniedException, a failed condition …) is
 * not a dependency failure. Anything else — no answer, an answer cut short or
 * reset while its body was read (the SDK then reports the status line it saw,
 * 200 or 400, beside ECONNRESET), a body that is not valid JSON, a timeout, a
 * 5xx — may have come after the request reached DynamoDB and changed something.
 */
export function isDependencyFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // Our own programming errors (thrown before anything is sent).
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError) return false;
  if (retryLaterErrors.has(error.name)) return true;
  if (error instanceof DynamoDBServiceException || isModeledServiceError(error)) return error.$fault !== 'client';
  return true;
}

/** A ServiceException built by another copy of the SDK (instanceof fails across copies): it has a $fault and a $metadata. */
function isModeledServiceError(error: Error): error is Error & { $fault: 'client' | 'server' } {
  const candidate = error as { $fault?: unknown; $metadata?: unknown };
  return (candidate.$fault === 'client' || candidate.$fault === 'server') && typeof candidate.$metadata === 'object';
}

/**
 * Whether DynamoDB answered a write with "slow down" or "busy" (the errors
 * above): it applied nothing. Any other failure after the call was sent (no
 * answer, an answer cut short, a 5xx) may have come after the write applied.
 */
export function appliedNothing(error: unknown): boolean {
  const cause = error instanceof DependencyUnavailableError ? error.cause : error;
  return cause instanceof Error && retryLaterErrors.has(cause.name);
}

/** Runs one DynamoDB call, turning a dependency failure into DependencyUnavailableError. */
export async function dynamoCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isDependencyFailure(error)) throw new DependencyUnavailableError(error);
    throw error;
  }
}
