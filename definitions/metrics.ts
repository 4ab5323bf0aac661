/**
 * The business metrics the functions publish with Powertools for AWS Lambda
 * Metrics (CloudWatch embedded metric format): namespace PetStore, dimension
 * service=petstore, plus one dimension per metric. The functions write them;
 * the dashboard and the 429 alarm of the CDK stack read them.
 */
export const businessMetrics = {
  namespace: 'PetStore',
  /** POWERTOOLS_SERVICE_NAME of every function, and the `service` dimension of every metric. */
  serviceName: 'petstore',
  /**
   * The `stage` dimension of every metric (staging, production), from this
   * environment variable of every function: stages sharing an account publish
   * apart, and each stage's alarms read only its own.
   */
  stageEnvVar: 'PETSTORE_STAGE',
  names: {
    /** One per pet created (an idempotent replay creates nothing and counts nothing). */
    petsCreated: 'PetsCreated',
    /** One per 4xx answer of a function, dimension `code` (the Error object's code). */
    clientErrors: 'ClientErrors',
    /** One per 429 of our rate limiter, dimension `plan`. */
    rateLimited: 'RateLimited',
    /**
     * One per request whose key the authorizer could not check (the key store
     * failed; clients got 503). Refused keys never count: the authorizer
     * alarm watches this, not the authorizer's Lambda Errors, which every
     * refused key raises.
     */
    keyStoreFailures: 'KeyStoreFailures',
  },
} as const;

export type BusinessMetricName = (typeof businessMetrics.names)[keyof typeof businessMetrics.names];
