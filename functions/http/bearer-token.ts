/**
 * The one accepted form of the Authorization header (decision 7): exactly
 * `Bearer`, one space, the token, nothing else.
 *
 * RFC 9110 (section 11.1) makes the scheme case-insensitive and RFC 6750
 * (section 2.1) allows several spaces after it, but API Gateway keys the
 * authorizer's cache by the identity source's exact value: "These parameters
 * will be used to derive the authorization caching key" (CreateAuthorizer,
 * identitySource, https://docs.aws.amazon.com/apigateway/latest/api/API_CreateAuthorizer.html),
 * with nothing to normalise it. Were `bearer K` and `BEARER  K` accepted, each
 * would be a cache miss of its own: a banned key would bypass its cached Deny
 * with an authorizer call and two DynamoDB reads per variant. Refused by shape
 * alone, a variant costs an authorizer invocation and no read; and WAF's
 * per-key rule counts every variant in the key's one bucket
 * (lib/constructs/api-firewall.ts, perKeyTextTransformations).
 */
const CANONICAL_BEARER = /^Bearer ([^\s]+)$/;

/** The token of `Bearer <token>`, or undefined for any other header (another case, another spacing, another scheme). */
export function bearerToken(authorization: string | undefined): string | undefined {
  return CANONICAL_BEARER.exec(authorization ?? '')?.[1];
}
