import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { errorBody } from '../../definitions/error-codes';
import type { WafConfig } from '../stage-config';

export interface ApiFirewallProps {
  /** Name of the web ACL, unique in the account and region. */
  name: string;
  stage: Stage;
  config: WafConfig;
}

/** WAF's sliding window for the rate rule; the config counts per minute. */
const WINDOW_SECONDS = 60;
const RESPONSE_BODY_KEY = 'rate_limited';
const KEY_RESPONSE_BODY_KEY = 'key_rate_limited';

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
 * AWS WAF in front of the API stage, two rate-based rules ("Rate-based rule
 * high-level settings in AWS WAF",
 * https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-high-level-settings.html):
 * - per client IP: stops floods before they reach the authorizer (an unknown
 *   key misses its cache, so each such request costs an authorizer invocation
 *   and a DynamoDB read);
 * - per API key, aggregated on the Authorization header's value (a custom key:
 *   each distinct value is its own count, "AWS::WAFv2::WebACL RateLimitHeader",
 *   https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-wafv2-webacl-ratelimitheader.html):
 *   the edge cap of one customer, above its contract, so that one key's flood
 *   cannot spend the stage throttle that every customer shares. WAF counts over
 *   a sliding 60-second window and reacts within about 30 seconds, sometimes
 *   minutes ("Rate-based rule caveats in AWS WAF"): a backstop, not a limit.
 * Blocked requests get the API's own Error object, 429 with Retry-After, not
 * WAF's default 403.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  readonly ruleMetricName: string;
  readonly keyRuleMetricName: string;

  /** What the operations dashboard graphs: the web ACL and each rule's metric. */
  get dashboardMetrics(): { webAclName: string; ruleMetricName: string; keyRuleMetricName: string } {
    return { webAclName: this.webAcl.name as string, ruleMetricName: this.ruleMetricName, keyRuleMetricName: this.keyRuleMetricName };
  }

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    this.ruleMetricName = `${props.name}-per-ip-rate`;
    this.keyRuleMetricName = `${props.name}-per-key-rate`;
    const body = errorBody('rate_limited', 'Too many requests from this address. Retry after the number of seconds in Retry-After.');
    const keyBody = errorBody('rate_limited', 'Too many requests with this API key. Retry after the number of seconds in Retry-After.');
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      description: `Per-IP rate limit of ${props.config.requestsPerIpPerMinute} and per-key limit of ${props.config.requestsPerKeyPerMinute} requests per minute in front of the Pet Store API.`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      customResponseBodies: {
        [RESPONSE_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify(body) },
        [KEY_RESPONSE_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify(keyBody) },
      },
      rules: [
        {
          name: 'per-ip-rate',
          priority: 0,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: props.config.requestsPerIpPerMinute,
              evaluationWindowSec: WINDOW_SECONDS,
            },
          },
          action: blockWith429(RESPONSE_BODY_KEY),
          visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: this.ruleMetricName, sampledRequestsEnabled: true },
        },
        {
          name: 'per-key-rate',
          priority: 1,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: 'authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
              limit: props.config.requestsPerKeyPerMinute,
              evaluationWindowSec: WINDOW_SECONDS,
            },
          },
          action: blockWith429(KEY_RESPONSE_BODY_KEY),
          visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: this.keyRuleMetricName, sampledRequestsEnabled: true },
        },
      ],
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: props.name, sampledRequestsEnabled: true },
    });
    new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
