import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { errorBody } from '../../definitions/error-codes';
import { maxRequestBodyBytes, oversizeBodyAnswer, wafBodyInspectionLimit } from '../../definitions/request-size-limits';
import type { WafConfig } from '../stage-config';

export interface ApiFirewallProps {
  /** Name of the web ACL, unique in the account and region. */
  name: string;
  stage: Stage;
  /** The rate rules: per API key always, per client IP where the stage turns it on. */
  rates: WafConfig;
}

/** WAF's sliding window for the rate rules; the config counts per minute. */
const WINDOW_SECONDS = 60;
const OVERSIZE_BODY = 'payload_too_large';
const IP_RATE_LIMITED_BODY = 'rate_limited';
const KEY_RATE_LIMITED_BODY = 'key_rate_limited';

/** The CloudWatch metric name of each rule (dimension `Rule`). */
export interface FirewallRuleMetricNames {
  bodySize: string;
  perKeyRate: string;
  perIpRate?: string;
}

/**
 * What WAF does to the Authorization value before counting it (the per-key
 * rule's custom key): every white-space character (tab, CR, LF, …) becomes a
 * space and runs of spaces become one (COMPRESS_WHITE_SPACE), then letters are
 * lowercased (LOWERCASE); WAF applies them from the lowest priority up ("Text
 * transformation options",
 * https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-transformation.html;
 * "AWS::WAFv2::WebACL RateLimitHeader": text transformations also "transform
 * request components before using them as custom aggregation keys",
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-wafv2-webacl-ratelimitheader.html).
 * So `bearer K`, `BEARER  K` and `Bearer\tK` count in the bucket of `Bearer K`:
 * a key cannot multiply its edge cap by varying case and spaces (decision 7;
 * the authorizer refuses those forms, each for an authorizer invocation and no
 * DynamoDB read). Leading and trailing white space is not part of a header's
 * value (RFC 9110, section 5.5). Lowercasing the key itself merges only keys
 * that differ in case alone: among 43 random base64url characters, no two
 * issued keys do in practice. Changing a rate rule's key resets its counts
 * for up to a minute (AWS::WAFv2::WebACL RateBasedStatement): once, at deploy.
 */
const perKeyTextTransformations: CfnWebACL.TextTransformationProperty[] = [
  { priority: 0, type: 'COMPRESS_WHITE_SPACE' },
  { priority: 1, type: 'LOWERCASE' },
];

/** Block with our 429 Error object (the named custom body) and Retry-After of one window. */
function blockWith429(bodyKey: string): CfnWebACL.RuleActionProperty {
  return {
    block: {
      customResponse: {
        responseCode: 429,
        customResponseBodyKey: bodyKey,
        responseHeaders: [{ name: 'Retry-After', value: String(WINDOW_SECONDS) }],
      },
    },
  };
}

/**
 * AWS WAF in front of the API stage, on every stage:
 *
 * - a size rule: a request body over the largest any operation accepts
 *   (definitions/request-size-limits.ts, 16 KiB) gets our Error object, 413,
 *   before API Gateway, the authorizer or a function runs. Without it a body of
 *   6–10 MB passes API Gateway but not Lambda's invoke limit, and API Gateway
 *   answers a 500 for it. WAF sees a body up to its inspection limit for API
 *   Gateway (set in associationConfig); oversize handling MATCH makes any
 *   longer body match ("Oversize web request components in AWS WAF",
 *   https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-oversize-handling.html;
 *   "Size constraint rule statement",
 *   https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-size-constraint-match.html).
 *   A custom response of a Block action sets the status (413 is one WAF
 *   supports), headers and body ("Custom responses for Block actions",
 *   https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-for-blocked-requests.html;
 *   "Supported status codes for custom responses",
 *   https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-status-codes.html).
 * - a rate-based rule per API key, aggregated on the Authorization header's
 *   value with case and white space normalised (perKeyTextTransformations; a
 *   custom key: each distinct value is its own count,
 *   "AWS::WAFv2::WebACL RateLimitHeader",
 *   https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-wafv2-webacl-ratelimitheader.html):
 *   the edge cap of one customer, above its contract, so that one key's flood
 *   cannot spend the stage throttle that every customer shares. WAF counts over
 *   a sliding 60-second window and reacts within about 30 seconds, sometimes
 *   minutes ("Rate-based rule caveats in AWS WAF"): a backstop, not a limit.
 * - where the stage config turns it on, a rate-based rule per client IP: it
 *   stops floods before they reach the authorizer (an unknown key misses its
 *   cache, so each such request costs an authorizer invocation and a DynamoDB
 *   read).
 *
 * Rate-limited requests get the API's own Error object, 429 with Retry-After,
 * not WAF's default 403 ("Rate-based rule high-level settings in AWS WAF",
 * https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-high-level-settings.html).
 */
export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  readonly ruleMetricNames: FirewallRuleMetricNames;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    const { requestsPerIpPerMinute, requestsPerKeyPerMinute } = props.rates;
    this.ruleMetricNames = {
      bodySize: `${props.name}-body-size`,
      perKeyRate: `${props.name}-per-key-rate`,
      ...(requestsPerIpPerMinute !== undefined ? { perIpRate: `${props.name}-per-ip-rate` } : {}),
    };
    const rules = [this.bodySizeRule(), this.perKeyRateRule(requestsPerKeyPerMinute)];
    if (requestsPerIpPerMinute !== undefined) rules.push(this.perIpRateRule(requestsPerIpPerMinute));
    const ipLimited = errorBody('rate_limited', 'Too many requests from this address. Retry after the number of seconds in Retry-After.');
    const keyLimited = errorBody('rate_limited', 'Too many requests with this API key. Retry after the number of seconds in Retry-After.');
    const perIp = requestsPerIpPerMinute !== undefined ? `, ${requestsPerIpPerMinute} requests per client IP per minute` : '';
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      // WAF descriptions allow letters, digits, spaces and =:#@/-,. only.
      description: `Bodies up to ${maxRequestBodyBytes} bytes, ${requestsPerKeyPerMinute} requests per API key per minute${perIp}, in front of the Pet Store API.`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      associationConfig: { requestBody: { API_GATEWAY: { defaultSizeInspectionLimit: wafBodyInspectionLimit.setting } } },
      customResponseBodies: {
        [OVERSIZE_BODY]: { contentType: 'APPLICATION_JSON', content: oversizeBodyAnswer.body },
        [IP_RATE_LIMITED_BODY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify(ipLimited) },
        [KEY_RATE_LIMITED_BODY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify(keyLimited) },
      },
      rules,
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: props.name, sampledRequestsEnabled: true },
    });
    new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }

  private bodySizeRule(): CfnWebACL.RuleProperty {
    return {
      name: 'body-size',
      priority: 0,
      statement: {
        sizeConstraintStatement: {
          fieldToMatch: { body: { oversizeHandling: 'MATCH' } },
          comparisonOperator: 'GT',
          size: maxRequestBodyBytes,
          textTransformations: [{ priority: 0, type: 'NONE' }],
        },
      },
      action: { block: { customResponse: { responseCode: oversizeBodyAnswer.statusCode, customResponseBodyKey: OVERSIZE_BODY } } },
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: this.ruleMetricNames.bodySize, sampledRequestsEnabled: true },
    };
  }

  private perKeyRateRule(limit: number): CfnWebACL.RuleProperty {
    return {
      name: 'per-key-rate',
      priority: 1,
      statement: {
        rateBasedStatement: {
          aggregateKeyType: 'CUSTOM_KEYS',
          customKeys: [{ header: { name: 'authorization', textTransformations: perKeyTextTransformations } }],
          limit,
          evaluationWindowSec: WINDOW_SECONDS,
        },
      },
      action: blockWith429(KEY_RATE_LIMITED_BODY),
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: this.ruleMetricNames.perKeyRate, sampledRequestsEnabled: true },
    };
  }

  private perIpRateRule(limit: number): CfnWebACL.RuleProperty {
    return {
      name: 'per-ip-rate',
      priority: 2,
      statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit, evaluationWindowSec: WINDOW_SECONDS } },
      action: blockWith429(IP_RATE_LIMITED_BODY),
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: this.ruleMetricNames.perIpRate!, sampledRequestsEnabled: true },
    };
  }
}
