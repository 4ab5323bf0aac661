import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  DomainName,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  Period,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  SecurityPolicy,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { gatewayResponse, gatewayResponses, type GatewayResponseType } from '../definitions/gateway-responses';
import { plans, type PlanName } from '../definitions/plans';
import { authorizer, routes, stageName, type OperationId } from '../definitions/routes';
import type { TableName } from '../definitions/tables';
import { ApiFirewall } from './constructs/api-firewall';
import { OperationFunction } from './constructs/operation-function';
import { OperationalAlarms } from './constructs/operational-alarms';
import { OperationsDashboard } from './constructs/operations-dashboard';
import { PetStoreTables } from './constructs/pet-store-tables';
import type { StageConfig } from './stage-config';
import { usagePlanLimits } from '../definitions/usage-plan-limits';

export interface PetStoreStackProps extends StackProps {
  /** The stage's row of lib/stage-config.ts, with the deployment's context applied (stageConfigFromContext). */
  config: StageConfig;
}

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/** API Gateway mapping templates are Velocity: `$` and `#` would be interpreted. */
function literalTemplate(body: string, type: string): string {
  if (/[$#]/.test(body)) throw new Error(`Gateway response ${type}: its body must not contain $ or #.`);
  return body;
}

/** Static gateway-response header values are single-quoted literals in API Gateway. */
function staticHeaderValue(value: string, type: string): string {
  if (value.includes("'")) throw new Error(`Gateway response ${type}: header values must not contain a single quote.`);
  return `'${value}'`;
}

/**
 * One stage of the Pet Store API. Everything is derived from the tables in
 * definitions/: one function, method and IAM policy per route, the tables, the
 * gateway responses and the usage plans.
 */
export class PetStoreStack extends Stack {
  readonly tables: Record<TableName, Table>;
  readonly operationFunctions: Record<OperationId, OperationFunction>;
  readonly authorizerFunction: OperationFunction;
  readonly api: RestApi;
  readonly usagePlans: Partial<Record<PlanName, UsagePlan>>;
  readonly alarms: OperationalAlarms;
  readonly dashboard: Dashboard;
  /** Present when the stage config names a custom domain. */
  readonly customDomain?: DomainName;
  /** Present when the stage config turns WAF on. */
  readonly firewall?: ApiFirewall;

  constructor(scope: Construct, id: string, props: PetStoreStackProps) {
    const { config, ...stackProps } = props;
    super(scope, id, {
      stackName: config.stackName,
      description: config.description,
      terminationProtection: config.terminationProtection,
      ...stackProps,
    });
    Tags.of(this).add('project', 'petstore');
    Tags.of(this).add('stage', config.stage);

    const { removalPolicy } = config.dataProtection;
    this.tables = new PetStoreTables(this, 'Tables', { dataProtection: config.dataProtection }).tables;

    const functionDefaults = {
      tables: this.tables,
      logRetention: config.logRetention,
      logRemovalPolicy: removalPolicy,
    };

    this.authorizerFunction = new OperationFunction(this, 'AuthorizerFunction', {
      ...functionDefaults,
      handlerEntry: authorizer.handlerEntry,
      description: 'Pet Store API key authorizer',
      access: authorizer.access,
    });
    const requestAuthorizer = new RequestAuthorizer(this, 'ApiKeyAuthorizer', {
      authorizerName: `petstore-${config.stage}-api-key`,
      handler: this.authorizerFunction,
      identitySources: [IdentitySource.header(authorizer.identityHeader)],
      resultsCacheTtl: Duration.seconds(authorizer.resultsCacheTtlSeconds),
    });

    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: config.logRetention, removalPolicy });
    this.api = new RestApi(this, 'Api', {
      restApiName: `petstore-${config.stage}`,
      description: `Pet Store API v1 (${config.stage})`,
      // The authorizer returns the caller's metering key as usageIdentifierKey;
      // clients never send an x-api-key header.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // API Gateway needs an account-wide role to write logs. Each stack sets it;
      // RETAIN keeps it when the staging stack is destroyed, so the other stage
      // sharing the account keeps logging.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName,
        // Every method of the stage together; unset, the account's limit applies.
        throttlingRateLimit: config.throttle?.rateLimit,
        throttlingBurstLimit: config.throttle?.burstLimit,
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            extendedRequestId: AccessLogField.contextExtendedRequestId(),
            requestTime: AccessLogField.contextRequestTimeEpoch(),
            ip: AccessLogField.contextIdentitySourceIp(),
            userAgent: AccessLogField.contextIdentityUserAgent(),
            httpMethod: AccessLogField.contextHttpMethod(),
            resourcePath: AccessLogField.contextResourcePath(),
            protocol: AccessLogField.contextProtocol(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            responseLatency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            integrationStatus: AccessLogField.contextIntegrationStatus(),
            authorizerLatency: AccessLogField.contextAuthorizerIntegrationLatency(),
            authorizerStatus: AccessLogField.contextAuthorizerStatus(),
            authorizerError: AccessLogField.contextAuthorizerError(),
            principalId: AccessLogField.contextAuthorizerPrincipalId(),
            apiKeyId: AccessLogField.contextIdentityApiKeyId(),
            errorType: AccessLogField.contextErrorResponseType(),
            errorMessage: AccessLogField.contextErrorMessageString(),
            xrayTraceId: AccessLogField.contextXrayTraceId(),
            wafResponseCode: AccessLogField.contextWafResponseCode(),
          }),
        ),
      },
    });

    const acknowledge = (id: string, reason: string) => Validations.of(this.api).acknowledge({ id, reason });
    acknowledge(
      'AwsSolutions-APIG2',
      'The operation functions validate every parameter and body (zod) and answer with the documented Error object; an API Gateway validator could only give a generic 400.',
    );
    acknowledge('AwsSolutions-COG4', 'The contract authenticates with bearer API keys (interface spec, part 5), checked by the REQUEST authorizer; no Cognito users.');
    if (config.waf) {
      this.firewall = new ApiFirewall(this, 'Firewall', { name: `petstore-${config.stage}-api`, stage: this.api.deploymentStage, config: config.waf });
    } else {
      acknowledge(
        'AwsSolutions-APIG3',
        'WAF is off for this deployment (turn it on with -c <stage>WafRateLimit=…): per-key limits are enforced exactly by the API and backed by usage plans.',
      );
    }
    acknowledge(
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      "API Gateway's account-wide logging role; AWS's managed policy is the documented one for it.",
    );

    // The one URL output is ApiUrl below (without RestApi's trailing slash).
    this.api.node.tryRemoveChild('Endpoint');

    // One function, resource method and policy per row of the route table.
    const operationFunctions: Partial<Record<OperationId, OperationFunction>> = {};
    for (const route of routes) {
      const fn = new OperationFunction(this, `${pascal(route.operationId)}Function`, {
        ...functionDefaults,
        handlerEntry: route.handlerEntry,
        description: `Pet Store ${route.operationId}: ${route.method} ${route.path}`,
        access: route.access,
      });
      operationFunctions[route.operationId] = fn;
      this.api.root.resourceForPath(route.path).addMethod(route.method, new LambdaIntegration(fn, { allowTestInvoke: false }), {
        operationName: route.operationId,
        authorizer: requestAuthorizer,
        authorizationType: AuthorizationType.CUSTOM,
        // Required so that API Gateway meters the authorizer's usageIdentifierKey
        // against its usage plan.
        apiKeyRequired: true,
      });
    }
    this.operationFunctions = operationFunctions as Record<OperationId, OperationFunction>;

    // The same Error objects the local gateway answers with.
    for (const type of Object.keys(gatewayResponses) as GatewayResponseType[]) {
      const response = gatewayResponse(type);
      this.api.addGatewayResponse(`GatewayResponse${type}`, {
        type: ResponseType.of(type),
        statusCode: String(response.statusCode),
        responseHeaders: Object.fromEntries(
          Object.entries(response.headers).map(([name, value]) => [name, staticHeaderValue(value, type)]),
        ),
        templates: { 'application/json': literalTemplate(response.body, type) },
      });
    }

    // Usage plans for the plans with fixed limits. Enterprise customers get a
    // usage plan each, created by the key administration tool.
    const usagePlans: Partial<Record<PlanName, UsagePlan>> = {};
    for (const name of Object.keys(plans) as PlanName[]) {
      const { limits, displayName } = plans[name];
      if (limits === 'custom') continue;
      const derived = usagePlanLimits(limits);
      usagePlans[name] = this.api.addUsagePlan(`${pascal(name)}UsagePlan`, {
        name: `petstore-${config.stage}-${name}`,
        description: `${displayName}: ${limits.perMinute} requests per minute, ${limits.perDay} per day (enforced exactly by the API; these are the backstop).`,
        throttle: { rateLimit: derived.rateLimit, burstLimit: derived.burstLimit },
        quota: { limit: derived.dailyQuota, period: Period.DAY },
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
    }
    this.usagePlans = usagePlans;

    this.alarms = new OperationalAlarms(this, 'Alarms', {
      namePrefix: config.stackName,
      stageLabel: config.stage,
      api: this.api,
      operationFunctions: this.operationFunctions,
      authorizerFunction: this.authorizerFunction,
      tables: this.tables,
      thresholds: config.alarms,
    });

    // Dashboard names are unique per account (not per region): the region keeps
    // a second region of the same stage apart.
    const dashboardName = `${config.stackName}-${this.region}`;
    this.dashboard = new OperationsDashboard(this, 'Operations', {
      dashboardName,
      stageLabel: config.stage,
      api: this.api,
      functions: { ...this.operationFunctions, authorizer: this.authorizerFunction },
      tables: this.tables,
      alarms: this.alarms.alarms,
      accessLogs,
      waf: this.firewall ? { webAclName: this.firewall.webAcl.name!, ruleMetricName: this.firewall.ruleMetricName } : undefined,
    }).dashboard;

    const executeApiUrl = Fn.join('', ['https://', this.api.restApiId, '.execute-api.', this.region, '.', this.urlSuffix, '/', stageName]);
    if (config.customDomain) {
      // Regional, so the certificate lives in the stack's region; the base path
      // `v1` keeps every URL ending in /v1 as on execute-api.
      this.customDomain = new DomainName(this, 'CustomDomain', {
        domainName: config.customDomain.domainName,
        certificate: Certificate.fromCertificateArn(this, 'CustomDomainCertificate', config.customDomain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
      });
      this.customDomain.addBasePathMapping(this.api, { basePath: stageName, stage: this.api.deploymentStage });
      new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the API (ends in /v1).', value: `https://${config.customDomain.domainName}/${stageName}` });
      new CfnOutput(this, 'CustomDomainTarget', {
        description: `Point ${config.customDomain.domainName} here: a CNAME, or a Route 53 alias with the hosted zone of CustomDomainHostedZoneId.`,
        value: this.customDomain.domainNameAliasDomainName,
      });
      new CfnOutput(this, 'CustomDomainHostedZoneId', { description: 'Hosted zone of CustomDomainTarget, for a Route 53 alias record.', value: this.customDomain.domainNameAliasHostedZoneId });
      new CfnOutput(this, 'ExecuteApiUrl', { description: 'The same API on its execute-api host (before DNS is set up).', value: executeApiUrl });
    } else {
      new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the API (ends in /v1).', value: executeApiUrl });
    }
    new CfnOutput(this, 'RestApiId', { description: 'For the key tool: Enterprise usage plans attach to this API.', value: this.api.restApiId });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'Subscribe to this topic to receive the alarms.', value: this.alarms.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { description: 'The CloudWatch dashboard of this stage.', value: dashboardName });
    new CfnOutput(this, 'DashboardUrl', {
      description: 'The CloudWatch dashboard of this stage, in the AWS console.',
      value: `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${dashboardName}`,
    });
    if (this.firewall) new CfnOutput(this, 'WebAclArn', { description: 'The WAF web ACL in front of the stage.', value: this.firewall.webAcl.attrArn });
    new CfnOutput(this, 'AccessLogGroupName', { description: 'API access logs: one JSON line per request.', value: accessLogs.logGroupName });
    for (const [name, fn] of Object.entries({ ...this.operationFunctions, authorizer: this.authorizerFunction })) {
      new CfnOutput(this, `${pascal(name)}LogGroupName`, { description: `Logs of the ${name} function.`, value: fn.logGroup.logGroupName });
    }
    for (const name of Object.keys(this.tables) as TableName[]) {
      new CfnOutput(this, `${pascal(name)}TableName`, { value: this.tables[name].tableName });
    }
    for (const [name, plan] of Object.entries(usagePlans) as [PlanName, UsagePlan][]) {
      new CfnOutput(this, `${pascal(name)}UsagePlanId`, { description: `Usage plan of the ${plans[name].displayName} plan.`, value: plan.usagePlanId });
    }
  }
}
