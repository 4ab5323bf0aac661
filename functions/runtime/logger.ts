import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one logger of the functions: structured JSON lines with the Lambda
 * request id. Never give it a secret, an Authorization header or a whole body.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'petstore' });
