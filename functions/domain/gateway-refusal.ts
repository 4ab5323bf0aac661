/**
 * Whether the authorizer refuses a banned customer's key itself, with a Deny
 * that API Gateway caches (so the ban costs no operation Lambda), instead of
 * letting the operation's rate limiter answer 429 `key_suspended`.
 *
 * API Gateway caches an authorizer's answer for one TTL per authorizer, not per
 * answer ("Use API Gateway Lambda authorizers", authorization caching,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-use-lambda-authorizer.html):
 * a Deny given when less of the ban remains than that TTL would still refuse
 * the key after its ban ended. So the gateway refuses only while the ban
 * outlasts the TTL plus the time the answer may take to reach API Gateway,
 * whose cache entry starts then (at most the authorizer's timeout); for the
 * ban's last minutes the operation's limiter answers, with the exact Retry-After.
 */
export function refusedAtGateway(
  suspendedUntilSeconds: number | undefined,
  nowMs: number,
  cache: { ttlSeconds: number; answeredWithinSeconds: number },
): boolean {
  if (suspendedUntilSeconds === undefined) return false;
  return suspendedUntilSeconds * 1000 - nowMs > (cache.ttlSeconds + cache.answeredWithinSeconds) * 1000;
}
