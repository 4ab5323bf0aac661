import { fieldLineCount, header } from './request';

/**
 * The Authorization header's credentials (decision 7), as RFC 6750 section 2.1
 * writes them: `"Bearer" 1*SP b64token`, the scheme in any case, since RFC 9110
 * section 11.1 makes an auth scheme a case-insensitive token
 * (https://www.rfc-editor.org/rfc/rfc6750#section-2.1,
 * https://www.rfc-editor.org/rfc/rfc9110#section-11.1). So `bearer K`,
 * `BEARER K` and `Bearer  K` are the key K, as OAuth's `token_type` "bearer"
 * and people typing by hand write it. Anything else is refused by its shape:
 * a tab or other white space, two tokens in one field, another scheme.
 *
 * What a form costs: API Gateway keys the authorizer's cache by the identity
 * source's exact value ("These parameters will be used to derive the
 * authorization caching key", CreateAuthorizer, identitySource,
 * https://docs.aws.amazon.com/apigateway/latest/api/API_CreateAuthorizer.html),
 * so each form a client sends is one authorizer call per cache period, no
 * more: its answer, a banned key's Deny included, is then cached like the
 * canonical form's. Every form is the same key everywhere else: the authorizer
 * finds the record by the token's hash, so the limiter, the usage plan and a
 * ban count the key id, whatever the spelling; WAF's per-key rule counts the
 * header after COMPRESS_WHITE_SPACE and LOWERCASE (lib/constructs/api-firewall.ts,
 * perKeyTextTransformations), one bucket for them all.
 */
const BEARER_CREDENTIALS = /^Bearer +([^\s]+)$/i;

/** The token of `Bearer <token>` (the scheme in any case, one or more spaces), or undefined for any other header. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return BEARER_CREDENTIALS.exec(authorization ?? '')?.[1];
}

type RequestHeaders = {
  headers?: Record<string, string | undefined> | null;
  multiValueHeaders?: Record<string, string[] | undefined> | null;
};

/**
 * The one Authorization field of a request, or undefined when it has none or
 * more than one. Authorization is a singleton field: its value is one
 * `credentials`, not a list (RFC 9110 section 11.6.2), and a sender "MUST NOT
 * generate multiple field lines with the same name" unless the field is a list
 * (section 5.3, https://www.rfc-editor.org/rfc/rfc9110#section-5.3). Taking
 * the first or the last of several would let their order decide who calls, so
 * several are refused, in any order. API Gateway's `headers` keep one value of
 * a repeated header and `multiValueHeaders` all of them, in the proxy event
 * and in the REST API REQUEST authorizer's event alike ("Input to an API
 * Gateway Lambda authorizer", REQUEST input format,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-input.html;
 * "Support for multi-value headers and query string parameters",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#apigateway-multivalue-headers-and-parameters).
 */
export function soleAuthorization(event: RequestHeaders, name = 'Authorization'): string | undefined {
  if (fieldLineCount(event, name) > 1) return undefined;
  return header(event, name);
}
