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

/**
 * AWS WAF in front of the API stage: one rate-based rule per client IP. It
 * stops floods before they reach the authorizer (an unknown key misses its
 * cache, so each such request costs an authorizer invocation and a DynamoDB
 * read). Blocked requests get the API's own Error object, 429 with
 * Retry-After, not WAF's default 403.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  readonly ruleMetricName: string;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    this.ruleMetricName = `${props.name}-per-ip-rate`;
    const body = errorBody('rate_limited', 'Too many requests from this address. Retry after the number of seconds in Retry-After.');
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      description: `Per-IP rate limit of ${props.config.requestsPerIpPerMinute} requests per minute in front of the Pet Store API.`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      customResponseBodies: {
        [RESPONSE_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify(body) },
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
          action: {
            block: {
              customResponse: {
                responseCode: body.status,
                customResponseBodyKey: RESPONSE_BODY_KEY,
                responseHeaders: [{ name: 'Retry-After', value: String(WINDOW_SECONDS) }],
              },
            },
          },
          visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: this.ruleMetricName, sampledRequestsEnabled: true },
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
