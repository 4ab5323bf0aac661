/**
 * What the API writes about each request, and what it keeps of it: the access
 * log's fields, the functions' log levels and X-Ray's sampling. One source for
 * the CDK stack (lib/constructs/api-front-door.ts, operation-function.ts) and
 * the bill (scripts/cost-model.ts), which charges exactly these bytes and traces.
 * Plain values with no CDK import.
 */

/**
 * The access log's line, one per request (API Gateway's `$context` variables,
 * "Variables for access logging for REST APIs",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-variables-for-access-logging.html):
 * the request id clients get in `x-amzn-RequestId` (what an operator searches
 * for; a client may set it) and the one API Gateway makes, which no client can
 * set and AWS Support asks for (`x-amz-apigw-id`; "include both", "Access
 * logging for REST APIs",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-access-logging.html), who called (the key id the authorizer named, and the
 * address), what was asked, what was answered and how fast, and who refused it
 * when the function never ran: the gateway response's type, which names the
 * authorizer's refusal or failure (UNAUTHORIZED, ACCESS_DENIED,
 * AUTHORIZER_FAILURE, AUTHORIZER_CONFIGURATION_ERROR) and WAF's block
 * (WAF_FILTERED) ("Gateway response types for API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
 * Left out since they cost more than they told: the metering key
 * (`$context.identity.apiKeyId`), which follows from the key id (its customer's
 * slot among its plan's pooled keys, functions/domain/metering.ts, or an
 * Enterprise customer's own key, named after the customer), the user agent,
 * the protocol, the response length, the integration's and authorizer's
 * latencies and statuses (the functions' Duration metrics tell them), the error
 * message (its responseType names it), the authorizer's error message (the type
 * names the failure; the authorizer's log and its KeyStoreFailures metric tell
 * which), WAF's response code (its block is WAF_FILTERED; with a web ACL on the
 * stage every allowed request would carry WAF_ALLOW, 30 bytes a line; WAF's own
 * metrics count its blocks), the X-Ray trace id (few requests are traced:
 * xraySampling).
 */
export const accessLogFields = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  ip: '$context.identity.sourceIp',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  responseLatency: '$context.responseLatency',
  principalId: '$context.authorizer.principalId',
  errorType: '$context.error.responseType',
} as const;

/**
 * The access log group's class: Infrequent Access, half Standard's ingestion
 * price ("Amazon CloudWatch pricing", https://aws.amazon.com/cloudwatch/pricing/).
 * Nothing here needs what only Standard offers: no metric filter, subscription
 * or alarm reads the group, and Logs Insights queries it ("Log classes",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CloudWatch_Logs_Log_Classes.html;
 * docs/operators.md, "Where to look"). The functions' groups stay Standard:
 * the rollback alarms read metrics extracted from their lines. A group's class
 * cannot change in place: CloudFormation replaces the group.
 */
export const accessLogClass: 'STANDARD' | 'INFREQUENT_ACCESS' = 'INFREQUENT_ACCESS';

/** The access log's format as the stage takes it: one JSON object per line. */
export const accessLogFormat = JSON.stringify(accessLogFields);

/**
 * The functions' logging (Lambda's advanced logging controls, "Configuring
 * advanced logging controls for Lambda functions",
 * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-advanced.html):
 * JSON, so that Lambda can filter by level. System logs at WARN: Lambda's
 * INFO-level START and REPORT lines of every invocation are not written
 * ("Log-level filtering": at the default INFO "Lambda automatically sends
 * 'start' and 'report' log messages",
 * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html);
 * their duration and memory are Lambda's own metrics. Application logs at INFO:
 * Lambda gives a line without a `level` (the embedded-metric-format lines the
 * rollback alarms read) the level INFO, so WARN would drop them.
 */
export const functionLogging = { format: 'JSON', applicationLogLevel: 'INFO', systemLogLevel: 'WARN' } as const;

/**
 * X-Ray's sampling rule for the API's stage ("Configure AWS X-Ray sampling
 * rules for API Gateway APIs",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-configuring-xray-sampling-rules.html):
 * the first request of each second and none of the rest, instead of the
 * default rule's first request and 5 % of the rest. The functions trace what
 * the stage sampled: with active tracing "Lambda will respect any tracing
 * header it receives from an upstream service"
 * (https://docs.aws.amazon.com/lambda/latest/dg/API_TracingConfig.html).
 */
export const xraySampling = {
  /** Requests traced per second, across the stage (X-Ray shares the reservoir among API Gateway's hosts). */
  reservoirPerSecond: 1,
  /** Share of the requests past the reservoir that are traced (0 to 1). */
  fixedRate: 0,
  /** Rules are evaluated by ascending priority; the default rule comes last. */
  priority: 100,
} as const;
