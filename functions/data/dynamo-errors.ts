import { DependencyUnavailableError } from '../domain/errors';

/** DynamoDB says "slow down": the request may succeed later. */
const throttlingErrors = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
]);

/**
 * Whether an error means DynamoDB was unreachable, too slow, throttling or
 * failing on its side (answered 503, retry later) rather than a bug of ours
 * such as a malformed request (answered 500).
 */
export function isDependencyFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const sdkError = error as Error & { $fault?: string; $metadata?: { httpStatusCode?: number } };
  if (throttlingErrors.has(sdkError.name)) return true;
  if (sdkError.$fault === 'server') return true;
  // Connection refused or reset, DNS failure, timeouts: no HTTP answer at all.
  return sdkError.$metadata?.httpStatusCode === undefined;
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
