import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { authorizer, functionTimeoutSeconds } from '../../definitions/routes';
import { type Customer, CustomerTable, callerOf, hashApiKey, isUsable, isWellFormedApiKey, type Secret } from '../customers';
import { type MeteringPool, meteringPoolFromEnvironment, usageIdentifierKeyOf } from '../domain/metering';
import { bearerToken, soleAuthorization } from '../http/bearer-token';
import { toAuthorizerContext } from '../http/caller';
import { BanCheck } from '../rate-limit';
import { type Dependencies, dependenciesFromEnvironment, TIME_BUDGET_GUARD_MS } from '../runtime/dependencies';
import { logger } from '../runtime/logger';
import { withAuthorizerOutcomes } from '../runtime/metrics';

type TimeBudget = Pick<Context, 'getRemainingTimeInMillis'> | undefined;

/** How long API Gateway keeps an answer: its cache TTL, from when the answer arrives, at most this function's timeout after it began. */
const answerCache = { ttlSeconds: authorizer.resultsCacheTtlSeconds, answeredWithinSeconds: functionTimeoutSeconds };

/**
 * The Lambda REQUEST authorizer: finds the key by the SHA-256 hash of the
 * bearer token (no string comparison of secrets, so no timing leak) and returns
 * who the caller is, its limits, and the metering key of its usage plan (a
 * pooled key per fixed plan, or an Enterprise key's own).
 *
 * Three answers, each cached by API Gateway per Authorization value for the
 * authorizer's TTL (docs/api-gateway-behaviour.md):
 * - Allow, for a usable key (the operation's limiter then counts it);
 * - Deny, for a key whose customer is banned for longer than that TTL
 *   (rate-limit/bans.ts): the ACCESS_DENIED gateway response, 429
 *   key_suspended (definitions/gateway-responses.ts), with no operation Lambda;
 * - the exact message "Unauthorized", for a missing, unknown, revoked or expired
 *   key: the UNAUTHORIZED gateway response (401 with WWW-Authenticate); a
 *   header in any form but `Bearer <key>` (any case, one or more spaces:
 *   http/bearer-token.ts), more than one Authorization field (the event's
 *   multiValueHeaders) or a malformed key is refused so before any DynamoDB read.
 * Any other error becomes AUTHORIZER_CONFIGURATION_ERROR or AUTHORIZER_FAILURE,
 * both 503. Since answers are cached for the whole API, the policy names every method.
 */
export function createHandler(dependencies: Dependencies, meteringPool: MeteringPool | undefined = meteringPoolFromEnvironment()) {
  const findKey = keyFinder(dependencies);
  const readBan = banReader(dependencies);
  // Each call's outcome (allowed, refused, failed) per version: the canary's data (functions/runtime/metrics.ts).
  return withAuthorizerOutcomes(async (event: APIGatewayRequestAuthorizerEvent, context?: Context): Promise<APIGatewayAuthorizerResult> => {
    const token = bearerToken(soleAuthorization(event, authorizer.identityHeader));
    if (!token || !isWellFormedApiKey(token)) throw new Error('Unauthorized');
    const secret = await findKey.secret(token, context);
    if (!secret || !isUsable(secret, dependencies.clock())) throw new Error('Unauthorized');
    // The customer and its ban are both keyed by the customer's id: read together, one round trip.
    const [customer, bannedUntil] = await Promise.all([findKey.customerOf(secret, context), readBan(secret, context)]);
    if (!customer) throw new Error('Unauthorized');
    if (bannedUntil !== undefined) {
      logger.debug('refused at the gateway: banned', { keyId: secret.keyId, bannedUntil });
      return bannedKeyPolicy(secret, event.methodArn, bannedUntil);
    }
    logger.debug('authorized', { keyId: secret.keyId, plan: customer.plan });
    return allowPolicy(secret, customer, event.methodArn, meteringPool);
  });
}

/**
 * The secret by its hash, then its customer (plan, limits, metering key). The
 * key store failed: logged, and thrown as anything but "Unauthorized" (counted
 * as failed by withAuthorizerOutcomes).
 */
function keyFinder(dependencies: Dependencies) {
  const keys = new CustomerTable(dependencies.db, dependencies.tableNames);
  const checked = async <T>(lookup: Promise<T>, context: TimeBudget, what: string): Promise<T> => {
    try {
      return await withinTimeBudget(lookup, context, what);
    } catch (error) {
      logger.error('the key store failed; the key could not be checked', { error });
      throw new Error('Key store unavailable');
    }
  };
  return {
    secret: (token: string, context: TimeBudget) => checked(keys.findSecret(hashApiKey(token)), context, 'the key lookup'),
    customerOf: (secret: Secret, context: TimeBudget): Promise<Customer | undefined> =>
      checked(keys.findCustomer(secret.customerId), context, 'the customer lookup'),
  };
}

/**
 * Until when the gateway refuses the customer for its ban, if it does
 * (functions/rate-limit/, BanCheck: while the ban outlasts the cached answer).
 * Unreadable, the key is let through: the operation's own limiter still
 * refuses a banned key, so a failure here costs Lambda time, never a wrong answer.
 */
function banReader(dependencies: Dependencies) {
  const bans = new BanCheck(dependencies.db, dependencies.tableNames.rateLimits, answerCache);
  return async (record: Pick<Secret, 'keyId' | 'customerId'>, context: TimeBudget): Promise<number | undefined> => {
    try {
      return await withinTimeBudget(bans.refusedUntil(record.customerId, dependencies.clock()), context, 'the ban lookup');
    } catch (error) {
      logger.warn('the ban could not be read; the operation limiter decides', { error, keyId: record.keyId });
      return undefined;
    }
  };
}

/** Answer before the function's timeout, whatever the lookup does: a killed authorizer is a bare 500 at API Gateway. */
async function withinTimeBudget<T>(lookup: Promise<T>, context: TimeBudget, what: string): Promise<T> {
  if (!context) return lookup;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within the time budget`)),
      Math.max(0, context.getRemainingTimeInMillis() - TIME_BUDGET_GUARD_MS),
    );
  });
  try {
    return await Promise.race([lookup, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function allowPolicy(
  secret: Pick<Secret, 'keyId'>,
  customer: Customer,
  methodArn: string,
  meteringPool: MeteringPool | undefined,
): APIGatewayAuthorizerResult {
  return {
    principalId: secret.keyId,
    policyDocument: wholeApiPolicy('Allow', methodArn),
    // The counters' id is the customer's: a rotation's old and new key count together (functions/customers/).
    context: toAuthorizerContext(callerOf(secret, customer)),
    // Fixed plans: the plan's pooled metering key; Enterprise: the customer's own (functions/domain/metering.ts).
    usageIdentifierKey: usageIdentifierKeyOf(customer, meteringPool),
  };
}

/** A Deny: no usage plan meters it and no operation runs; the context names the refusal for the access log. */
function bannedKeyPolicy(secret: Pick<Secret, 'keyId'>, methodArn: string, bannedUntil: number): APIGatewayAuthorizerResult {
  return {
    principalId: secret.keyId,
    policyDocument: wholeApiPolicy('Deny', methodArn),
    context: { refusal: 'key_suspended', bannedUntil: String(bannedUntil) },
  };
}

function wholeApiPolicy(effect: 'Allow' | 'Deny', methodArn: string): APIGatewayAuthorizerResult['policyDocument'] {
  return { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: wholeApiArn(methodArn) }] };
}

/** arn:aws:execute-api:region:account:apiId/stage/METHOD/path → arn:…:apiId/stage/* */
export function wholeApiArn(methodArn: string): string {
  const [apiPart, stage] = methodArn.split('/');
  return `${apiPart}/${stage}/*`;
}

export const handler = createHandler(dependenciesFromEnvironment());
