import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  Period,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { gatewayResponse, gatewayResponses, type GatewayResponseType } from '../definitions/gateway-responses';
import { plans, type PlanName } from '../definitions/plans';
import { authorizer, routes, stageName, type OperationId } from '../definitions/routes';
import type { TableName } from '../definitions/tables';
import { OperationFunction } from './constructs/operation-function';
import { OperationalAlarms } from './constructs/operational-alarms';
import { PetStoreTables } from './constructs/pet-store-tables';
import type { StageConfig } from './stage-config';
import { usagePlanLimits } from './usage-plan-limits';

export interface PetStoreStackProps extends StackProps {
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
    acknowledge(
      'AwsSolutions-APIG3',
      'No WAF yet: per-key limits are enforced exactly by the API and backed by usage plans; add a web ACL when abuse from unauthenticated traffic shows up.',
    );
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

    const alarms = new OperationalAlarms(this, 'Alarms', {
      stage: config.stage,
      api: this.api,
      functions: { ...this.operationFunctions, authorizer: this.authorizerFunction },
      tables: this.tables,
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the API (ends in /v1).',
      value: Fn.join('', ['https://', this.api.restApiId, '.execute-api.', this.region, '.', this.urlSuffix, '/', stageName]),
    });
    new CfnOutput(this, 'RestApiId', { description: 'For the key tool: Enterprise usage plans attach to this API.', value: this.api.restApiId });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'Subscribe to this topic to receive the alarms.', value: alarms.topic.topicArn });
    for (const name of Object.keys(this.tables) as TableName[]) {
      new CfnOutput(this, `${pascal(name)}TableName`, { value: this.tables[name].tableName });
    }
    for (const [name, plan] of Object.entries(usagePlans) as [PlanName, UsagePlan][]) {
      new CfnOutput(this, `${pascal(name)}UsagePlanId`, { description: `Usage plan of the ${plans[name].displayName} plan.`, value: plan.usagePlanId });
    }
  }
}
