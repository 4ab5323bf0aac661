import { Logger } from '@aws-lambda-powertools/logger';

let instance: Logger | undefined;

/**
 * The one logger of the functions: structured JSON lines with the Lambda
 * request id. Never give it a secret, an Authorization header or a whole body.
 *
 * Built at its first use rather than at import: constructing the Powertools
 * Logger and Metrics (each with its own console on stdout and stderr) took
 * about 7 ms of init in a bundle of their own, before anything was logged.
 */
export const logger: Logger = new Proxy({} as Logger, {
  get(_target, property) {
    instance ??= new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'petstore' });
    const value: unknown = Reflect.get(instance, property, instance);
    return typeof value === 'function' ? value.bind(instance) : value;
  },
});
