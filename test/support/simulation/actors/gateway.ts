import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import type { PlanLimits } from '../../../../definitions/plans';
import { authorizer } from '../../../../definitions/routes';
import type { TableName } from '../../../../definitions/tables';
import { createHandler } from '../../../../functions/authorizer/handler';
import { requestAuthorizerEvent } from '../../api-gateway-events';
import type { SimulatedDynamoDB } from '../../simulated-dynamodb';

export type GatewayAnswer =
  | { kind: 'allow'; limits: PlanLimits; keyId: string; customerId: string }
  | { kind: 'unauthorized' }
  | { kind: 'denied' };

/** How long API Gateway keeps an authorizer's answer, per Authorization value. */
export const GATEWAY_CACHE_TTL_MS = authorizer.resultsCacheTtlSeconds * 1000;

/**
 * API Gateway in front of the functions: the real authorizer, called at most
 * once per cache TTL per secret, its answers cached as API Gateway caches them
 * (a Deny too: answered 429 key_suspended with Retry-After the TTL).
 */
export class Gateway {
  private readonly cache = new Map<string, { at: number; answer: GatewayAnswer }>();
  private readonly authorize: ReturnType<typeof createHandler>;

  constructor(store: SimulatedDynamoDB, tableNames: Record<TableName, string>, clock: () => number) {
    this.authorize = createHandler({ db: store.client({ name: 'authorizer', mode: 'immediate' }), tableNames, clock }, undefined);
  }

  /** The cached answer for the secret, or the authorizer's; the first of a history may have been cached a while before it began. */
  async answer(secret: string, nowMs: number, random: () => number): Promise<GatewayAnswer> {
    const cached = this.cache.get(secret);
    if (cached && nowMs - cached.at < GATEWAY_CACHE_TTL_MS) return cached.answer;
    const at = cached ? nowMs : nowMs - Math.floor(random() * GATEWAY_CACHE_TTL_MS);
    const answer = await this.authorizerAnswer(secret);
    this.cache.set(secret, { at, answer });
    return answer;
  }

  private async authorizerAnswer(secret: string): Promise<GatewayAnswer> {
    const event = requestAuthorizerEvent({
      method: 'GET',
      resource: '/pets',
      path: '/pets',
      headers: { Authorization: `Bearer ${secret}` },
    });
    let result: APIGatewayAuthorizerResult;
    try {
      result = await this.authorize(event);
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') return { kind: 'unauthorized' };
      throw error;
    }
    if (result.policyDocument.Statement[0]?.Effect === 'Deny') return { kind: 'denied' };
    const context = result.context ?? {};
    return {
      kind: 'allow',
      keyId: String(context.keyId),
      customerId: String(context.customerId),
      limits: { perMinute: Number(context.perMinute), perDay: Number(context.perDay) },
    };
  }
}
