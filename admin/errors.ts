import { ApiKeyChangedError } from '../functions/customers';
import { DependencyUnavailableError } from '../functions/domain/errors';

/** A failure the administrator can act on; its message says what to do and is shown as it is. */
export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}

const credentialErrors = new Set([
  'CredentialsProviderError',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'InvalidSignatureException',
]);
const expiredErrors = new Set(['ExpiredToken', 'ExpiredTokenException', 'TokenRefreshRequired']);
const deniedErrors = new Set(['AccessDenied', 'AccessDeniedException', 'UnauthorizedOperation', 'UnauthorizedException']);

/**
 * One line for a person, for any error: what went wrong and, where we know it,
 * what to do. Never a stack trace, never a secret (SDK messages carry neither).
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return `Unexpected failure: ${oneLine(String(error))}`;
  if (error instanceof AdminError) return oneLine(error.message);
  if (error instanceof ApiKeyChangedError)
    return `${error.keyId} was changed by someone else while this command ran; nothing was written. Run the command again.`;
  if (error instanceof DependencyUnavailableError) {
    // Whether a write landed is for the caller to say (admin/key-admin.ts reads it back); a read changed nothing.
    return `DynamoDB did not answer (${oneLine(causeOf(error))}). Check the connection (and that npm start is still running, for the local target).`;
  }
  if (credentialErrors.has(error.name) || /could not load credentials/i.test(error.message)) {
    return 'No usable AWS credentials: set AWS_PROFILE (after `aws sso login`) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, then run the command again.';
  }
  if (expiredErrors.has(error.name))
    return 'Your AWS credentials have expired: renew them (e.g. `aws sso login`) and run the command again.';
  if (deniedErrors.has(error.name)) return `AWS refused the request with your credentials (${error.name}): ${oneLine(error.message)}`;
  if (/region is missing/i.test(error.message))
    return 'No AWS region: pass --region (or set AWS_REGION) to the region the stack is deployed in.';
  return `Unexpected failure (${error.name}): ${oneLine(error.message)}`;
}

function causeOf(error: Error): string {
  const cause = error.cause;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : 'no answer';
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
