import type { APIGatewayProxyEvent } from 'aws-lambda';
import { isPlanName, type PlanLimits, type PlanName } from '../../definitions/plans';

/** Who is calling: what the authorizer found for the API key. */
export interface Caller {
  keyId: string;
  /** The customer the key is a secret of, whose plan, limits and counters it uses (functions/customers/). */
  customerId: string;
  plan: PlanName;
  limits: PlanLimits;
}

/**
 * The authorizer's context as API Gateway passes it on. Values must be
 * strings, numbers or booleans; REST APIs hand them to the integration as strings.
 */
export function toAuthorizerContext(caller: Caller): Record<string, string> {
  return {
    keyId: caller.keyId,
    customerId: caller.customerId,
    plan: caller.plan,
    perMinute: String(caller.limits.perMinute),
    perDay: String(caller.limits.perDay),
  };
}

export function callerFrom(event: APIGatewayProxyEvent): Caller | undefined {
  const context = event.requestContext.authorizer ?? {};
  const keyId = context.keyId;
  const plan = context.plan;
  const perMinute = Number(context.perMinute);
  const perDay = Number(context.perDay);
  if (typeof keyId !== 'string' || !keyId || !isPlanName(plan)) return undefined;
  if (!(perMinute > 0) || !(perDay > 0)) return undefined;
  const customerId = context.customerId;
  if (typeof customerId !== 'string' || !customerId) return undefined;
  return { keyId, customerId, plan, limits: { perMinute, perDay } };
}
