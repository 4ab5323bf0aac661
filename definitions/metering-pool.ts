import type { PlanName } from './plans';

/**
 * The pooled API Gateway API keys that meter fixed-plan customers (the CDK
 * stack creates them; the authorizer returns one as usageIdentifierKey:
 * functions/domain/metering.ts). Their names and values are defined here once.
 */

/** The plans whose keys share pooled metering keys: every plan with fixed limits. */
export type PooledPlan = Exclude<PlanName, 'enterprise'>;

/** The authorizer's environment variables that describe the pool. */
export const meteringPoolEnvironment = { prefix: 'METERING_POOL_PREFIX', keysPerPlan: 'METERING_POOL_KEYS_PER_PLAN' } as const;

/**
 * The value of a pooled key: alphanumeric, as API Gateway wants ("an
 * alphanumeric string between 20 and 128 characters", "Usage plans and API
 * keys for REST APIs in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-usage-plans.html);
 * the prefix (the stack id's 32 hex digits) makes it unique per stack.
 */
export function pooledMeteringKey(prefix: string, plan: PooledPlan, slot: number): string {
  return `${prefix}${plan}${String(slot).padStart(3, '0')}`;
}

/** The name of a pooled key in API Gateway. */
export function pooledKeyName(stage: string, plan: PooledPlan, slot: number): string {
  return `petstore-${stage}-${plan}-pool-${slot}`;
}
