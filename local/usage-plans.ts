import { deploymentCheckKey, isDeploymentCheck } from '../definitions/deployment-check';
import { customerUsagePlan, pooledUsagePlan, type UsagePlanSettings } from '../definitions/usage-plan-limits';

/**
 * The usage plan API Gateway applies to the metering key the authorizer names
 * (its usageIdentifierKey), as the stack and the key tool make them: a pooled
 * key's plan (no throttle, no quota: definitions/usage-plan-limits.ts), an
 * Enterprise customer's own (a throttle from its limits: the key tool's
 * createOwnPlan), and the deployment check's own (the stack's). Locally there
 * is no registry of API keys, so the plan is told from the authorizer's
 * context beside the key: it names the plan and limits the key tool made the
 * usage plan from. (Usage plans and API keys: "Create and use usage plans with
 * API keys for REST APIs in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-usage-plans.html.)
 */
export function usagePlanAsSynthesized(_apiKey: string, context: Record<string, unknown>): UsagePlanSettings | undefined {
  if (isDeploymentCheck(String(context.keyId ?? ''))) return deploymentCheckKey.usagePlan;
  if (context.plan !== 'enterprise') return pooledUsagePlan;
  const perMinute = Number(context.perMinute);
  const perDay = Number(context.perDay);
  return perMinute > 0 && perDay > 0 ? customerUsagePlan({ perMinute, perDay }) : undefined;
}
