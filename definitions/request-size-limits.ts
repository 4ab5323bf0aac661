import { errorBody } from './error-codes';
import { routes } from './routes';

/**
 * How large a request may be before anything of ours runs, and who says so.
 * docs/api-gateway-behaviour.md ("Request bodies") has the whole reasoning.
 *
 * - API Gateway takes REST API payloads up to 10 MB ("Quotas for configuring
 *   and running a REST API in API Gateway",
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
 * - Lambda takes synchronous invocations up to 6 MB ("Invoke",
 *   https://docs.aws.amazon.com/lambda/latest/dg/API_Invoke.html), and when the
 *   Lambda API rejects the invocation API Gateway answers a 500 ("Handling
 *   Lambda errors with an API Gateway API",
 *   https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html):
 *   a body of 6–10 MB would be a 5xx before our code runs.
 * - So AWS WAF, in front of the stage, refuses every body over the largest one
 *   an operation accepts (decision 12: 16 KiB) with our Error object, 413,
 *   before API Gateway, the authorizer or a function runs
 *   (lib/constructs/api-firewall.ts); the local gateway does the same.
 */

/** The largest body any operation accepts: the firewall's limit, for every route alike. */
export const maxRequestBodyBytes = Math.max(...routes.map((route) => route.contract.limits?.MAX_BODY_BYTES ?? 0));

/** API Gateway's payload limit for a REST API: 10 MB. */
export const API_GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

/** Lambda's payload limit for a synchronous invocation (the whole event, body and all): 6 MB. */
export const LAMBDA_MAX_INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * How much of a body AWS WAF sees for API Gateway: 16 KB by default, 32, 48 or
 * 64 KB if the web ACL says so (at extra cost); a larger body is "oversize"
 * ("Managing body inspection size limits for AWS WAF",
 * https://docs.aws.amazon.com/waf/latest/developerguide/web-acl-setting-body-inspection-limit.html).
 * The smallest setting that sees every body an operation accepts.
 */
export const wafBodyInspectionLimit = (() => {
  const settings = [16, 32, 48, 64].map((kb) => ({ setting: `KB_${kb}`, bytes: kb * 1024 }));
  const chosen = settings.find(({ bytes }) => bytes >= maxRequestBodyBytes);
  if (!chosen) throw new Error(`A body limit of ${maxRequestBodyBytes} bytes is above what AWS WAF can inspect for API Gateway (64 KB)`);
  return chosen;
})();

const oversizeBody = errorBody(
  'payload_too_large',
  `The request body is larger than ${maxRequestBodyBytes / 1024} KiB (${maxRequestBodyBytes} bytes).`,
);

/** The firewall's answer to a body over maxRequestBodyBytes: the Error object, 413, no rate-limit headers. */
export const oversizeBodyAnswer = {
  statusCode: oversizeBody.status,
  headers: { 'Content-Type': 'application/json' } as Record<string, string>,
  body: JSON.stringify(oversizeBody),
};
