import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { limitsFor } from '../../definitions/plans';
import { authorizer } from '../../definitions/routes';
import { ApiKeyRepository } from '../data/api-key-repository';
import { bearerToken, countersIdOf, hashApiKey, isUsable, isWellFormedApiKey } from '../domain/api-keys';
import { type MeteringPool, meteringPoolFromEnvironment, usageIdentifierKeyOf } from '../domain/metering';
import { toAuthorizerContext } from '../http/caller';
import { header } from '../http/request';
import { type Dependencies, dependenciesFromEnvironment, TIME_BUDGET_GUARD_MS } from '../runtime/dependencies';
import { logger } from '../runtime/logger';
import { canaryMetrics, withAuthorizerOutcomes } from '../runtime/metrics';

/**
 * The Lambda REQUEST authorizer: finds the key by the SHA-256 hash of the
 * bearer token (no string comparison of secrets, so no timing leak) and returns
 * who the caller is, its limits, and the metering key of its usage plan (a
 * pooled key per fixed plan, or an Enterprise key's own).
 *
 * Throwing the exact message "Unauthorized" makes API Gateway answer with the
 * UNAUTHORIZED gateway response (401 Error object with WWW-Authenticate). Any
 * other error becomes AUTHORIZER_CONFIGURATION_ERROR or AUTHORIZER_FAILURE,
 * both 503 (definitions/gateway-responses.ts). Since answers are cached for
 * the whole API per Authorization value, the policy allows every method.
 */
export function createHandler(
  dependencies: Dependencies,
  metricsTarget: Metrics = canaryMetrics,
  meteringPool: MeteringPool | undefined = meteringPoolFromEnvironment(),
) {
  const keys = new ApiKeyRepository(dependencies.db, dependencies.tableNames.apiKeys);
  /** The key store failed: logged, and thrown as anything but "Unauthorized" (counted as failed by withAuthorizerOutcomes). */
  const findKey = async (token: string, context: Pick<Context, 'getRemainingTimeInMillis'> | undefined) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const lookup = keys.findByHash(hashApiKey(token));
      if (!context) return await lookup;
      // Answer before the function's timeout, whatever the lookup does: a killed authorizer is a bare 500 at API Gateway.
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('the key lookup did not finish within the time budget')),
          Math.max(0, context.getRemainingTimeInMillis() - TIME_BUDGET_GUARD_MS),
        );
      });
      return await Promise.race([lookup, deadline]);
    } catch (error) {
      logger.error('the key store failed; the key could not be checked', { error });
      throw new Error('Key store unavailable');
    } finally {
      clearTimeout(timer);
    }
  };
  // Each call's outcome (allowed, refused, failed) per version: the canary's data (functions/runtime/metrics.ts).
  return withAuthorizerOutcomes(async (event: APIGatewayRequestAuthorizerEvent, context?: Context): Promise<APIGatewayAuthorizerResult> => {
    const token = bearerToken(header(event, authorizer.identityHeader));
    if (!token || !isWellFormedApiKey(token)) throw new Error('Unauthorized');
    const record = await findKey(token, context);
    if (!record || !isUsable(record, dependencies.clock())) throw new Error('Unauthorized');
    const limits = limitsFor(record.plan, record.customLimits);
    logger.debug('authorized', { keyId: record.keyId, plan: record.plan });
    return {
      principalId: record.keyId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApiArn(event.methodArn) }],
      },
      // The counters' id: a rotation's old and new key count together (functions/domain/api-keys.ts).
      context: toAuthorizerContext({ keyId: record.keyId, countersId: countersIdOf(record), plan: record.plan, limits }),
      // Fixed plans: the plan's pooled metering key; Enterprise: the key's own (functions/domain/metering.ts).
      usageIdentifierKey: usageIdentifierKeyOf(record, meteringPool),
    };
  }, metricsTarget);
}

/** arn:aws:execute-api:region:account:apiId/stage/METHOD/path → arn:…:apiId/stage/* */
export function wholeApiArn(methodArn: string): string {
  const [apiPart, stage] = methodArn.split('/');
  return `${apiPart}/${stage}/*`;
}

export const handler = createHandler(dependenciesFromEnvironment());
