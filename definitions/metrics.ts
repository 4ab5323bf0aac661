/**
 * The metrics the functions publish (CloudWatch embedded metric format),
 * namespace PetStore: business metrics, with Powertools for AWS Lambda
 * Metrics, dimensions service=petstore and the stage plus one per metric; and
 * the canary metrics, what each function version's clients got, with the
 * dimensions `canaryDimensions`. The functions write them; the dashboard and
 * the alarms of the CDK stack read them.
 */
export const businessMetrics = {
  namespace: 'PetStore',
  /** POWERTOOLS_SERVICE_NAME of every function, and the `service` dimension of every business metric. */
  serviceName: 'petstore',
  /**
   * The `stage` dimension of every metric (staging, production), from this
   * environment variable of every function: stages sharing an account publish
   * apart, and each stage's alarms read only its own.
   */
  stageEnvVar: 'PETSTORE_STAGE',
  /**
   * The `function` dimension of the canary metrics, from this environment
   * variable: the function's short name in the stack (an operation's id,
   * `authorizer`), which the stack also gives the alarms that read it.
   */
  functionEnvVar: 'PETSTORE_FUNCTION',
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
    /**
     * What clients got, per function version (canaryDimensions): one
     * AnswerLatency value (ms) per answer of an operation function, so its
     * SampleCount is the number of answers; ServerErrors, one per 500 (our
     * bug: anything but a dependency failure); Unavailable, one per 503 (a
     * dependency failed). The rollback alarms compare a new version with the
     * old one on these (lib/constructs/function-rollout.ts).
     */
    answerLatency: 'AnswerLatency',
    serverErrors: 'ServerErrors',
    unavailable: 'Unavailable',
    /**
     * The authorizer's outcomes, per function version: KeyCheckLatency, one
     * value (ms) per key checked (its SampleCount is the number of checks);
     * KeysRefused, one per key refused (401 or a Deny); KeyStoreFailures
     * (above), one per key it could not check (clients got 5xx).
     */
    keyCheckLatency: 'KeyCheckLatency',
    keysRefused: 'KeysRefused',
  },
  /**
   * The dimensions of the canary metrics, beside the stage: the function's
   * short name (functionEnvVar; shorter than the name CloudFormation makes,
   * and the same across a function's replacement) and the version that
   * answered, from the environment Lambda gives every function
   * (AWS_LAMBDA_FUNCTION_VERSION: "Defined runtime environment variables",
   * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html).
   * No `service`: the namespace holds one service, and every answer writes
   * these lines (functions/runtime/metrics.ts writes them without Powertools,
   * which would add it).
   */
  canaryDimensions: { function: 'function', version: 'version' },
} as const;

export type BusinessMetricName = (typeof businessMetrics.names)[keyof typeof businessMetrics.names];
