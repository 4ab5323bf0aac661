import type { PlanLimits } from './plans';
import type { TableAccess } from './table-grants';
import type { UsagePlanSettings } from './usage-plan-limits';

/**
 * The API key of the pre-traffic check (functions/deployment-check/): one per
 * stage, an Enterprise-plan key of its own (so its own usage plan and API
 * Gateway key meter it, never a customer's pooled key), stored like any key by
 * the hash of a secret that the stack keeps in Secrets Manager. The functions
 * know it by its fixed id: its answers count in the canary metrics (they are
 * the new version's data) but never in the business metrics (PetsCreated,
 * ClientErrors, RateLimited), which count customers.
 */
export const deploymentCheckKey = {
  /**
   * Its key id is this and the first 12 hex digits of its hash: one id per
   * secret, so a replaced secret is a key of its own, and never a customer's
   * (their ids are `key_` and 16 hex digits).
   */
  keyIdPrefix: 'key_deployment_check_',
  owner: 'Pre-traffic deployment check (CodeDeploy BeforeAllowTraffic hook)',
  /** A few calls per deployment (four deployment groups, four calls each, plus comparisons with the live version). */
  limits: { perMinute: 120, perDay: 5_000 } satisfies PlanLimits,
  /** Its own usage plan (the stack's DeploymentCheckUsagePlan): the check calls the new versions directly, never through it; it caps the key should it ever be used through the API. */
  usagePlan: { throttle: { rateLimit: 2, burstLimit: 10 }, quota: { limit: 5_000 } } satisfies UsagePlanSettings,
  /** Name of the pet its create makes, status sold. */
  petName: 'deployment-check',
  /**
   * The pets it creates live in a namespace of their own: their list index keys
   * start with it, which no customer's walk queries, and getPet answers 404 for
   * them to anyone but the check (functions/data/pet-repository.ts). So the check
   * proves that the new createPet writes and the new list and get read back, and
   * leaves nothing a customer can see.
   */
  petNamespace: 'deployment-check',
} as const;

/** The check function (CodeDeploy's BeforeAllowTraffic hook of every deployment group). */
export const deploymentCheckFunction = {
  handlerEntry: 'functions/deployment-check/handler.ts',
  /**
   * Conditional puts of its own key's items: each inserted where absent, and its
   * secret put anew only over its own that no longer works (functions/customers/, CustomerTable.ensureCheckCustomer).
   * It overwrites nothing else and reads nothing: a refused put returns what was in the way.
   */
  access: { apiKeys: ['dynamodb:PutItem'] } satisfies TableAccess,
  /**
   * Up to eight calls one after the other (the authorizer, three operations, and the live version of each for a
   * comparison), each answering within the functions' 10 s timeout, with room to spare.
   */
  timeoutSeconds: 120,
} as const;

/** The environment the stack gives the check function. */
export const deploymentCheckEnvironment = {
  /** ARN of the Secrets Manager secret holding the key's secret (43 alphanumeric characters after `psk_`). */
  secretArn: 'DEPLOYMENT_CHECK_SECRET_ARN',
  /** The value of the check key's own API Gateway API key (its usageIdentifierKey). */
  meteringKey: 'DEPLOYMENT_CHECK_METERING_KEY',
  /** JSON: `{ authorizer: { version, live }, operations: { <operationId>: { version, live } } }`, qualified function ARNs. */
  targets: 'DEPLOYMENT_CHECK_TARGETS',
} as const;

export function isDeploymentCheck(keyId: string | undefined): boolean {
  return keyId?.startsWith(deploymentCheckKey.keyIdPrefix) ?? false;
}

/**
 * The check key's id; a key the check re-created (it found its record revoked,
 * expired or gone) adds `_` and a random suffix, so that nothing kept under an
 * earlier id (a revocation mark on the counters) holds it.
 */
export function deploymentCheckKeyId(keyHash: string, recreationSuffix?: string): string {
  const id = deploymentCheckKey.keyIdPrefix + keyHash.slice(0, 12);
  return recreationSuffix === undefined ? id : `${id}_${recreationSuffix}`;
}
