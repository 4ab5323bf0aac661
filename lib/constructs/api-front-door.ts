import { Duration, Fn, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, LogGroupClass } from 'aws-cdk-lib/aws-logs';
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import { type GatewayResponseType, gatewayResponse, gatewayResponses } from '../../definitions/gateway-responses';
import { accessLogClass, accessLogFormat, xraySampling } from '../../definitions/observability';
import { authorizer, type OperationId, routes, stageName } from '../../definitions/routes';
import type { StageConfig } from '../stage-config';
import { ApiFirewall } from './api-firewall';

export interface ApiFrontDoorProps {
  config: StageConfig;
  /** What API Gateway invokes per operation: the function, or its alias in a canary stage. */
  operationTargets: Record<OperationId, IFunction>;
  authorizerTarget: IFunction;
}

export interface ApiFrontDoor {
  api: RestApi;
  accessLogs: LogGroup;
  executionLogs: LogGroup;
  firewall: ApiFirewall;
}

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
 * The API's front door, in the stack's own scope (so the logical ids of the
 * deployed API stay what they were): the REST API and its one stage with
 * access and execution logs, the REQUEST authorizer, one method per route,
 * the gateway responses of definitions/gateway-responses.ts and WAF (its
 * body-size rule always, its per-IP rate rule when configured).
 */
export function addApiFrontDoor(stack: Stack, props: ApiFrontDoorProps): ApiFrontDoor {
  const { config } = props;
  const { removalPolicy } = config.dataProtection;
  // Its class: definitions/observability.ts (accessLogClass).
  const accessLogs = new LogGroup(stack, 'ApiAccessLogs', {
    retention: config.logRetention,
    removalPolicy,
    logGroupClass: LogGroupClass[accessLogClass],
  });
  const api = new RestApi(stack, 'Api', {
    restApiName: `petstore-${config.stage}`,
    description: `Pet Store API v1 (${config.stage})`,
    // The authorizer returns the caller's metering key as usageIdentifierKey;
    // clients never send an x-api-key header.
    apiKeySourceType: ApiKeySourceType.AUTHORIZER,
    // Regional, like the custom domain, the WAF web ACL and the docs: without
    // it, a REST API is EDGE-optimized (behind a CloudFront distribution that
    // AWS manages), the default of CreateRestApi ("API endpoint types for
    // REST APIs in API Gateway",
    // https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-endpoint-types.html).
    endpointTypes: [EndpointType.REGIONAL],
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
      // Errors only (authorizer and integration failures, with their request
      // ids), into the execution log group below.
      loggingLevel: MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.custom(accessLogFormat),
    },
  });
  addSamplingRule(stack, api);
  // The one URL output is ApiUrl (without RestApi's trailing slash).
  api.node.tryRemoveChild('Endpoint');
  const executionLogs = addExecutionLogGroup(stack, api, config);
  const firewall = acknowledgeAndProtect(stack, api, config);
  addMethods(stack, api, props);
  addGatewayResponses(api);
  return { api, accessLogs, executionLogs, firewall };
}

/**
 * The stage's X-Ray sampling (definitions/observability.ts): a rule names an
 * API's stage as `{api-name}/{stage-name}` with service type
 * AWS::ApiGateway::Stage ("Configure AWS X-Ray sampling rules for API Gateway
 * APIs", https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-configuring-xray-sampling-rules.html).
 */
function addSamplingRule(stack: Stack, api: RestApi): void {
  new CfnSamplingRule(stack, 'ApiSamplingRule', {
    samplingRule: {
      ruleName: api.restApiName,
      priority: xraySampling.priority,
      reservoirSize: xraySampling.reservoirPerSecond,
      fixedRate: xraySampling.fixedRate,
      serviceName: `${api.restApiName}/${stageName}`,
      serviceType: 'AWS::ApiGateway::Stage',
      host: '*',
      httpMethod: '*',
      urlPath: '*',
      resourceArn: '*',
      version: 1,
    },
  });
}

/**
 * API Gateway writes execution logs to `API-Gateway-Execution-Logs_{restApiId}/{stage}`,
 * creating that group itself, without retention, unless it exists ("Set up
 * CloudWatch logging for REST APIs in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-logging.html).
 * Created here first, it has the stage's retention and removal policy.
 */
function addExecutionLogGroup(stack: Stack, api: RestApi, config: StageConfig): LogGroup {
  const executionLogs = new LogGroup(stack, 'ApiExecutionLogs', {
    logGroupName: Fn.join('', ['API-Gateway-Execution-Logs_', api.restApiId, `/${stageName}`]),
    retention: config.logRetention,
    removalPolicy: config.dataProtection.removalPolicy,
  });
  api.deploymentStage.node.addDependency(executionLogs);
  return executionLogs;
}

function acknowledgeAndProtect(stack: Stack, api: RestApi, config: StageConfig): ApiFirewall {
  const acknowledge = (id: string, reason: string) => Validations.of(api).acknowledge({ id, reason });
  acknowledge(
    'AwsSolutions-APIG2',
    'The operation functions validate every parameter and body (zod) and answer with the documented Error object; an API Gateway validator could only give a generic 400.',
  );
  acknowledge(
    'AwsSolutions-COG4',
    'The contract authenticates with bearer API keys (interface spec, part 5), checked by the REQUEST authorizer; no Cognito users.',
  );
  acknowledge(
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    "API Gateway's account-wide logging role; AWS's managed policy is the documented one for it.",
  );
  // On every stage: its body-size rule keeps bodies past Lambda's invoke limit from becoming 5xx,
  // and its per-key rate rule keeps one key's flood from spending the stage throttle for everyone.
  return new ApiFirewall(stack, 'Firewall', { name: `petstore-${config.stage}-api`, stage: api.deploymentStage, rates: config.waf });
}

/** One resource method per row of the route table, behind the REQUEST authorizer. */
function addMethods(stack: Stack, api: RestApi, props: ApiFrontDoorProps): void {
  const requestAuthorizer = new RequestAuthorizer(stack, 'ApiKeyAuthorizer', {
    authorizerName: `petstore-${props.config.stage}-api-key`,
    handler: props.authorizerTarget,
    identitySources: [IdentitySource.header(authorizer.identityHeader)],
    resultsCacheTtl: Duration.seconds(authorizer.resultsCacheTtlSeconds),
  });
  for (const route of routes) {
    api.root
      .resourceForPath(route.path)
      .addMethod(route.method, new LambdaIntegration(props.operationTargets[route.operationId], { allowTestInvoke: false }), {
        operationName: route.operationId,
        authorizer: requestAuthorizer,
        authorizationType: AuthorizationType.CUSTOM,
        // Required so that API Gateway meters the authorizer's usageIdentifierKey
        // against its usage plan.
        apiKeyRequired: true,
      });
  }
}

/** The same Error objects the local gateway answers with. */
function addGatewayResponses(api: RestApi): void {
  for (const type of Object.keys(gatewayResponses) as GatewayResponseType[]) {
    const response = gatewayResponse(type);
    api.addGatewayResponse(`GatewayResponse${type}`, {
      type: ResponseType.of(type),
      statusCode: String(response.statusCode),
      responseHeaders: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, staticHeaderValue(value, type)])),
      templates: { 'application/json': literalTemplate(response.body, type) },
    });
  }
}
