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
  /** The per-IP rate rule, where the stage turns it on. */
  perIpRate?: WafConfig;
}

/** WAF's sliding window for the rate rule; the config counts per minute. */
const WINDOW_SECONDS = 60;
const RATE_LIMITED_BODY = 'rate_limited';
const OVERSIZE_BODY = 'payload_too_large';

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
 * - where the stage config turns it on, a rate-based rule per client IP: it
 *   stops floods before they reach the authorizer (an unknown key misses its
 *   cache, so each such request costs an authorizer invocation and a DynamoDB
 *   read), answered 429 with Retry-After, not WAF's default 403.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;
  /** The CloudWatch metric name of each rule (dimension `Rule`). */
  readonly ruleMetricNames: { bodySize: string; perIpRate?: string };

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    this.ruleMetricNames = {
      bodySize: `${props.name}-body-size`,
      ...(props.perIpRate ? { perIpRate: `${props.name}-per-ip-rate` } : {}),
    };
    const rules = [this.bodySizeRule()];
    if (props.perIpRate) rules.push(this.perIpRateRule(props.perIpRate));
    const rateLimited = errorBody('rate_limited', 'Too many requests from this address. Retry after the number of seconds in Retry-After.');
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      // WAF descriptions allow letters, digits, spaces and =:#@/-,. only.
      description: `Bodies up to ${maxRequestBodyBytes} bytes${props.perIpRate ? `, ${props.perIpRate.requestsPerIpPerMinute} requests per client IP per minute` : ''}, in front of the Pet Store API.`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      associationConfig: { requestBody: { API_GATEWAY: { defaultSizeInspectionLimit: wafBodyInspectionLimit.setting } } },
      customResponseBodies: {
        [OVERSIZE_BODY]: { contentType: 'APPLICATION_JSON', content: oversizeBodyAnswer.body },
        [RATE_LIMITED_BODY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify(rateLimited) },
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

  private perIpRateRule(config: WafConfig): CfnWebACL.RuleProperty {
    return {
      name: 'per-ip-rate',
      priority: 1,
      statement: {
        rateBasedStatement: { aggregateKeyType: 'IP', limit: config.requestsPerIpPerMinute, evaluationWindowSec: WINDOW_SECONDS },
      },
      action: {
        block: {
          customResponse: {
            responseCode: 429,
            customResponseBodyKey: RATE_LIMITED_BODY,
            responseHeaders: [{ name: 'Retry-After', value: String(WINDOW_SECONDS) }],
          },
        },
      },
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: this.ruleMetricNames.perIpRate!, sampledRequestsEnabled: true },
    };
  }
}
