/**
 * CDK assertion tests on both stages, derived from the tables in definitions/
 * and lib/stage-config.ts: what an operator would notice if it were wrong.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, type CfnElement, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { deploymentCheckEnvironment, deploymentCheckFunction } from '../../definitions/deployment-check';
import { type GatewayResponseType, gatewayResponse, gatewayResponses } from '../../definitions/gateway-responses';
import { meteringPoolEnvironment, type PooledPlan, pooledKeyName } from '../../definitions/metering-pool';
import { businessMetrics } from '../../definitions/metrics';
import { type PlanName, planNames, plans } from '../../definitions/plans';
import { oversizeBodyAnswer } from '../../definitions/request-size-limits';
import { authorizer, type RouteDefinition, routes, stageName } from '../../definitions/routes';
import type { DynamoDbAction } from '../../definitions/table-grants';
import { listSharding, petIndexes, type TableDefinition, type TableName, tables } from '../../definitions/tables';
import { customersPerPooledKey } from '../../definitions/usage-plan-limits';
import { canaryLines } from '../../functions/runtime/metrics';
import { canaryVerdict, LIVE_ALIAS } from '../../lib/constructs/function-rollout';
import { addPetStoreStacks } from '../../lib/petstore-app';
import type { PetStoreStack } from '../../lib/petstore-stack';
import { projectRoot } from '../../lib/project-root';
import {
  canary,
  defaultWafRequestsPerKeyPerMinute,
  pooledKeysKept,
  rollbackAlarmEvaluation,
  rollbackThresholds,
  type StageName,
  stageNames,
  stages,
  stageThrottleFor,
  tablesWorthRestoring,
} from '../../lib/stage-config';
import { creationChain } from '../support/creation-chain';

/** The per-key rate rule's text transformations (lib/constructs/api-firewall.ts): white space compressed, then lowercased. */
const perKeyTextTransformations = [
  { Priority: 0, Type: 'COMPRESS_WHITE_SPACE' },
  { Priority: 1, Type: 'LOWERCASE' },
];

type Json = Record<string, any>;

interface Built {
  stack: PetStoreStack;
  template: Template;
  resources: Record<string, Json>;
  outputs: Record<string, Json>;
}

// The same feature flags as `cdk synth` (they change the template).
const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;

const outdirs: string[] = [];
/** The stacks as `cdk synth` builds them with no extra context: custom domain and WAF's per-IP rule off. */
const built = {} as Record<StageName, Built>;
/** The same stages with a custom domain and WAF configured by context (not bundled: only the template matters). */
const configured = {} as Record<StageName, Built>;

const REGION = 'eu-west-1';
const configuredContext = (stage: StageName): Record<string, string> => ({
  [`${stage}Region`]: REGION,
  [`${stage}DomainName`]: `api.${stage}.example.com`,
  [`${stage}CertificateArn`]: `arn:aws:acm:${REGION}:123456789012:certificate/0f3e4c1a-${stage === 'staging' ? '1111' : '2222'}-4b5c-9d8e-7f6a5b4c3d2e`,
  [`${stage}WafRateLimit`]: '3000',
  [`${stage}LambdaConcurrencyQuota`]: '1000',
});

function buildStacks(extraContext: Record<string, unknown>): Record<StageName, Built> {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-cdk-test-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...cdkContext, ...extraContext } });
  const stacks = addPetStoreStacks(app);
  const result = {} as Record<StageName, Built>;
  for (const stage of stageNames) {
    const template = Template.fromStack(stacks[stage]);
    const json = template.toJSON() as Json;
    result[stage] = { stack: stacks[stage], template, resources: json.Resources, outputs: json.Outputs ?? {} };
  }
  return result;
}

beforeAll(() => {
  // Bundling takes seconds per function: build the default stacks once for the file,
  // and the configured ones without bundling.
  Object.assign(built, buildStacks({}));
  Object.assign(
    configured,
    buildStacks({ 'aws:cdk:bundling-stacks': [], ...configuredContext('staging'), ...configuredContext('production') }),
  );
}, 120_000);

afterAll(() => {
  for (const outdir of outdirs) fs.rmSync(outdir, { recursive: true, force: true });
});

// ---- helpers over the raw template ------------------------------------------

function ofType(b: Built, type: string): [string, Json][] {
  return Object.entries(b.resources).filter(([, resource]) => resource.Type === type);
}

function logicalId(b: Built, construct: IConstruct): string {
  return b.stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

/** The logical id of the `live` alias of a function: what API Gateway invokes. */
function aliasId(b: Built, fn: IConstruct): string {
  return b.stack.getLogicalId(fn.node.findChild('LiveAlias').node.defaultChild as CfnElement);
}

const tableNames = Object.keys(tables) as TableName[];
const fixedPlans = (Object.keys(plans) as PlanName[]).flatMap((name) => {
  const limits = plans[name].limits;
  return limits === 'custom' ? [] : [{ name, limits }];
});
const functionSpecs: { id: string; access: RouteDefinition['access']; fn: (b: Built) => IConstruct }[] = [
  ...routes.map((route) => ({
    id: route.operationId,
    access: route.access,
    fn: (b: Built) => b.stack.operationFunctions[route.operationId],
  })),
  { id: 'authorizer', access: authorizer.access, fn: (b: Built) => b.stack.authorizerFunction },
];

/** Full path of an API Gateway resource, from its PathPart chain up to the root. */
function resourcePath(b: Built, id: string): string {
  const resource = b.resources[id];
  if (!resource) throw new Error(`no resource ${id}`);
  const parent = resource.Properties.ParentId as Json;
  const prefix = parent.Ref ? resourcePath(b, parent.Ref) : '';
  return `${prefix}/${resource.Properties.PathPart}`;
}

/** A policy resource in readable form: a table ARN → its logical id, an index ARN → `<id>/index/*`. */
function resourceKey(resource: unknown): string {
  if (typeof resource === 'string') return resource;
  const r = resource as Json;
  if (r['Fn::GetAtt']) return r['Fn::GetAtt'][0];
  const join = r['Fn::Join'];
  if (join && join[0] === '' && join[1].length === 2 && join[1][0]['Fn::GetAtt'] && typeof join[1][1] === 'string') {
    return `${join[1][0]['Fn::GetAtt'][0]}${join[1][1]}`;
  }
  return JSON.stringify(resource);
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Every rule id acknowledged anywhere in the stack (Validations.acknowledge), with its reason. */
function acknowledgments(stack: PetStoreStack): { id: string; reason: string; path: string }[] {
  return stack.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          id: id.replace(/^annotation::/i, ''),
          reason,
          path: construct.node.path,
        })),
      ),
  );
}

interface AlarmMetric {
  namespace: string;
  metricName: string;
  dimensions: Record<string, unknown>;
  stat?: string;
}

/** The metrics an alarm watches, whether it has one metric or a math expression over several. */
function alarmMetrics(alarm: Json): AlarmMetric[] {
  const dims = (list: Json[] | undefined) => Object.fromEntries((list ?? []).map((d) => [d.Name, d.Value]));
  if (alarm.MetricName) {
    return [
      {
        namespace: alarm.Namespace,
        metricName: alarm.MetricName,
        dimensions: dims(alarm.Dimensions),
        stat: alarm.Statistic ?? alarm.ExtendedStatistic,
      },
    ];
  }
  return (alarm.Metrics as Json[])
    .filter((m) => m.MetricStat)
    .map((m) => ({
      namespace: m.MetricStat.Metric.Namespace,
      metricName: m.MetricStat.Metric.MetricName,
      dimensions: dims(m.MetricStat.Metric.Dimensions),
      stat: m.MetricStat.Stat,
    }));
}

/** The expression whose value the alarm compares with its threshold. */
const alarmExpression = (alarm: Json): string | undefined =>
  (alarm.Metrics as Json[] | undefined)?.find((m) => m.Expression && m.ReturnData !== false)?.Expression;

/**
 * The dashboard body as JSON: CloudFormation joins it from strings and
 * references; a reference becomes "<Ref:Id>" or "<GetAtt:Id.Attr>".
 */
function dashboardBody(b: Built): Json {
  const dashboards = ofType(b, 'AWS::CloudWatch::Dashboard');
  expect(dashboards).toHaveLength(1);
  const body = dashboards[0]![1].Properties.DashboardBody as Json | string;
  const parts = typeof body === 'string' ? [body] : (body['Fn::Join'][1] as unknown[]);
  const text = parts
    .map((part) => {
      if (typeof part === 'string') return part;
      const ref = part as Json;
      if (ref.Ref) return `<Ref:${ref.Ref}>`;
      if (ref['Fn::GetAtt']) return `<GetAtt:${ref['Fn::GetAtt'].join('.')}>`;
      throw new Error(`unexpected part of the dashboard body: ${JSON.stringify(part)}`);
    })
    .join('');
  return JSON.parse(text);
}

/** Every metric line of every graph of the dashboard, as JSON text for matching. */
function dashboardMetricLines(b: Built): string[] {
  const widgets = dashboardBody(b).widgets as Json[];
  return widgets
    .filter((w) => w.type === 'metric')
    .flatMap((w) => (w.properties.metrics as unknown[][]).map((line) => JSON.stringify(line)));
}

/** Every Allow statement of every policy attached to the role, as "action on resource" pairs. */
function grantedPairs(b: Built, roleId: string, filter: (action: string) => boolean): string[] {
  const pairs: string[] = [];
  for (const [, policy] of ofType(b, 'AWS::IAM::Policy')) {
    const roles = (policy.Properties.Roles as Json[]).map((role) => role.Ref);
    if (!roles.includes(roleId)) continue;
    for (const statement of policy.Properties.PolicyDocument.Statement as Json[]) {
      expect(statement.Effect).toBe('Allow');
      for (const action of asArray<string>(statement.Action)) {
        if (!filter(action)) continue;
        for (const resource of asArray(statement.Resource)) pairs.push(`${action} on ${resourceKey(resource)}`);
      }
    }
  }
  return pairs.sort();
}

function expectedPairs(b: Built, access: RouteDefinition['access']): string[] {
  const pairs: string[] = [];
  for (const [table, actions] of Object.entries(access) as [TableName, readonly DynamoDbAction[]][]) {
    const tableId = logicalId(b, b.stack.tables[table]);
    // Query on the indexes only: no Query on a request path reads the table itself.
    for (const action of actions) if (action !== 'dynamodb:Query') pairs.push(`${action} on ${tableId}`);
    if (actions.includes('dynamodb:Query')) pairs.push(`dynamodb:Query on ${tableId}/index/*`);
  }
  return pairs.sort();
}

// ---- the tests --------------------------------------------------------------

describe.each(stageNames)('%s stack', (stage) => {
  const config = stages[stage];
  const b = (): Built => built[stage];

  test('cdk-nag AwsSolutions: no finding left unacknowledged (errors and warnings alike)', () => {
    const report = new AwsSolutionsChecks(b().stack).validateScope(b().stack);
    expect(report.violations.map((violation) => `${violation.severity} ${violation.ruleName}`)).toEqual([]);
  });

  test('every acknowledgment names an AwsSolutions rule and gives a reason', () => {
    const acks = acknowledgments(b().stack);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id).toMatch(/^AwsSolutions-[A-Z]+\d+/);
      expect(ack.reason.length).toBeGreaterThanOrEqual(40);
    }
  });

  test('is named after the stage config', () => {
    expect(b().stack.stackName).toBe(config.stackName);
    expect(b().stack.terminationProtection).toBe(stage === 'production');
  });

  test("throttles the whole stage at the sum of its expected customers' usage-plan limits (stage config)", () => {
    const props = ofType(b(), 'AWS::ApiGateway::Stage')[0]![1].Properties;
    const settings = (props.MethodSettings as Json[]).find((m) => m.HttpMethod === '*' && m.ResourcePath === '/*')!;
    expect(config.throttle).toEqual(stageThrottleFor(config.customers));
    expect(settings.ThrottlingRateLimit).toBe(config.throttle.rateLimit);
    expect(settings.ThrottlingBurstLimit).toBe(config.throttle.burstLimit);
  });

  test('the REST API is regional (EndpointConfiguration REGIONAL), like its custom domain and WAF', () => {
    const apis = ofType(b(), 'AWS::ApiGateway::RestApi');
    expect(apis).toHaveLength(1);
    expect(apis[0]![1].Properties.EndpointConfiguration).toEqual({ Types: ['REGIONAL'] });
  });

  describe('API', () => {
    test(`has one stage, "${stageName}", with tracing, metrics and JSON access logs`, () => {
      const stageResources = ofType(b(), 'AWS::ApiGateway::Stage');
      expect(stageResources).toHaveLength(1);
      const props = stageResources[0]![1].Properties;
      expect(props.StageName).toBe(stageName);
      expect(props.TracingEnabled).toBe(true);
      expect(props.MethodSettings).toEqual(
        expect.arrayContaining([expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', MetricsEnabled: true })]),
      );
      const accessLogGroup = props.AccessLogSetting.DestinationArn['Fn::GetAtt'][0];
      expect(b().resources[accessLogGroup]?.Type).toBe('AWS::Logs::LogGroup');
      const format = JSON.parse(props.AccessLogSetting.Format);
      expect(format).toMatchObject({
        requestId: '$context.requestId',
        status: '$context.status',
        principalId: '$context.authorizer.principalId',
      });
      // Never the caller's secret.
      expect(props.AccessLogSetting.Format).not.toMatch(/Authorization|requestOverride|header/i);
    });

    test('takes API keys from the authorizer (usageIdentifierKey)', () => {
      b().template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
      b().template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
    });

    test('has a REQUEST authorizer on the Authorization header with the cache TTL of definitions/routes.ts', () => {
      const authorizers = ofType(b(), 'AWS::ApiGateway::Authorizer');
      expect(authorizers).toHaveLength(1);
      const props = authorizers[0]![1].Properties;
      expect(props.Type).toBe('REQUEST');
      expect(props.IdentitySource).toBe(`method.request.header.${authorizer.identityHeader}`);
      expect(props.AuthorizerResultTtlInSeconds).toBe(authorizer.resultsCacheTtlSeconds);
      // Through the authorizer's live alias, which deployments move.
      expect(JSON.stringify(props.AuthorizerUri)).toContain(`"${aliasId(b(), b().stack.authorizerFunction)}"`);
    });

    test('treats every request body as text (no binary media types): what the local gateway imitates', () => {
      const api = ofType(b(), 'AWS::ApiGateway::RestApi')[0]![1];
      expect(api.Properties.BinaryMediaTypes).toBeUndefined();
    });

    test('has exactly one method per route', () => {
      const methods = ofType(b(), 'AWS::ApiGateway::Method').map(
        ([, m]) => `${m.Properties.HttpMethod} ${resourcePath(b(), m.Properties.ResourceId.Ref)}`,
      );
      expect(methods.sort()).toEqual(routes.map((route) => `${route.method} ${route.path}`).sort());
    });

    test.each(routes.map((route) => [route.operationId, route] as const))(
      '%s: verb, path, authorizer, API key, integration',
      (_, route) => {
        const authorizerId = ofType(b(), 'AWS::ApiGateway::Authorizer')[0]![0];
        const matching = ofType(b(), 'AWS::ApiGateway::Method').filter(
          ([, m]) => m.Properties.HttpMethod === route.method && resourcePath(b(), m.Properties.ResourceId.Ref) === route.path,
        );
        expect(matching).toHaveLength(1);
        const props = matching[0]![1].Properties;
        expect(props).toMatchObject({
          OperationName: route.operationId,
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
          ApiKeyRequired: true,
          Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
        });
        // Wired to this route's function, through its live alias, not another's.
        expect(JSON.stringify(props.Integration.Uri)).toContain(`"${aliasId(b(), b().stack.operationFunctions[route.operationId])}"`);
      },
    );

    test('answers every gateway response type of definitions/gateway-responses.ts with its Error object', () => {
      const types = Object.keys(gatewayResponses) as GatewayResponseType[];
      const responses = ofType(b(), 'AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties);
      expect(responses.map((r) => r.ResponseType).sort()).toEqual([...types].sort());
      for (const type of types) {
        const expected = gatewayResponse(type);
        const props = responses.find((r) => r.ResponseType === type)!;
        expect(props.StatusCode).toBe(String(expected.statusCode));
        const body = JSON.parse(props.ResponseTemplates['application/json']);
        expect(body).toEqual({ code: gatewayResponses[type].code, message: gatewayResponses[type].message, status: expected.statusCode });
        for (const [name, value] of Object.entries(expected.headers)) {
          expect(props.ResponseParameters[`gatewayresponse.header.${name}`]).toBe(`'${value}'`);
        }
      }
      const unauthorized = responses.find((r) => r.ResponseType === 'UNAUTHORIZED')!;
      expect(unauthorized.StatusCode).toBe('401');
      expect(unauthorized.ResponseParameters['gatewayresponse.header.WWW-Authenticate']).toBe("'Bearer'");
    });

    // A Lambda throttle (the account's concurrency used up), a timeout, out-of-memory or an init failure:
    // waiting is the cure (definitions/gateway-responses.ts cites AWS for what reaches this type).
    test('a function Lambda could not run or that failed (INTEGRATION_FAILURE) gets 503 service_unavailable with Retry-After', () => {
      const responses = ofType(b(), 'AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties);
      const failure = responses.find((r) => r.ResponseType === 'INTEGRATION_FAILURE')!;
      expect(failure.StatusCode).toBe('503');
      expect(JSON.parse(failure.ResponseTemplates['application/json'])).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(failure.ResponseParameters['gatewayresponse.header.Retry-After']).toMatch(/^'[1-9]\d*'$/);
    });
  });

  describe('usage plans', () => {
    test('one per plan with fixed limits, none for custom (Enterprise) plans', () => {
      const names = ofType(b(), 'AWS::ApiGateway::UsagePlan').map(([, p]) => p.Properties.UsagePlanName);
      // And the deployment check's own (describe 'pre-traffic check').
      expect(names.sort()).toEqual(
        [...fixedPlans.map(({ name }) => `petstore-${stage}-${name}`), `petstore-${stage}-deployment-check`].sort(),
      );
    });

    test.each(fixedPlans.map((plan) => [plan.name] as const))(
      '%s: the usage plan of the pooled keys has no quota and no throttle that one customer could use up for the others',
      (name) => {
        const plan = ofType(b(), 'AWS::ApiGateway::UsagePlan').find(([, p]) => p.Properties.UsagePlanName === `petstore-${stage}-${name}`)!;
        const props = plan[1].Properties;
        // One pooled key meters many customers: any quota or throttle on it is one bucket they share
        // (definitions/usage-plan-limits.ts, pooledUsagePlan; SCALING.md, "One customer's flood").
        expect(props.Quota).toBeUndefined();
        expect(props.Throttle).toBeUndefined();
        expect(customersPerPooledKey(config.customers[name as PooledPlan], config.meteringKeysPerPlan)).toBeGreaterThan(1);
        const restApiId = ofType(b(), 'AWS::ApiGateway::RestApi')[0]![0];
        const stageId = ofType(b(), 'AWS::ApiGateway::Stage')[0]![0];
        expect(props.ApiStages).toEqual([expect.objectContaining({ ApiId: { Ref: restApiId }, Stage: { Ref: stageId } })]);
      },
    );

    test.each(fixedPlans.map((plan) => [plan.name] as const))(
      '%s: the pooled metering keys of the plan, in its usage plan, valued from the stack id (not in the template)',
      (name) => {
        const planId = logicalId(b(), b().stack.usagePlans[name]!);
        const keys = ofType(b(), 'AWS::ApiGateway::ApiKey').filter(([, key]) =>
          String(key.Properties.Name).startsWith(`petstore-${stage}-${name}-pool-`),
        );
        expect(keys.map(([, key]) => key.Properties.Name).sort()).toEqual(
          Array.from({ length: pooledKeysKept(config) }, (_, slot) => pooledKeyName(stage, name as PooledPlan, slot)).sort(),
        );
        for (const [id, key] of keys) {
          expect(key.Properties.Enabled).toBe(true);
          expect(JSON.stringify(key.Properties.Value)).toContain('AWS::StackId');
          expect(ofType(b(), 'AWS::ApiGateway::UsagePlanKey').filter(([, link]) => link.Properties.KeyId.Ref === id)).toEqual([
            [
              expect.any(String),
              expect.objectContaining({
                Type: 'AWS::ApiGateway::UsagePlanKey',
                Properties: { KeyId: { Ref: id }, KeyType: 'API_KEY', UsagePlanId: { Ref: planId } },
              }),
            ],
          ]);
        }
      },
    );

    // AWS Support in serverless/serverless#12065 (https://github.com/serverless/serverless/issues/12065):
    // "CreateUsagePlanKey API call can run only one at a time in an AWS region … use the DependsOn
    // attribute"; CreateApiKey is limited to 5 requests per second per account ("Quotas for configuring
    // and running a REST API in API Gateway",
    // https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
    test.each(['AWS::ApiGateway::UsagePlanKey', 'AWS::ApiGateway::ApiKey'])(
      'every %s but the first depends directly on another one: CloudFormation creates them one at a time',
      (type) => {
        const chain = creationChain(b().resources, type);
        expect(chain.length).toBe(fixedPlans.length * pooledKeysKept(config) + 1);
        expect(ofType(b(), type)).toHaveLength(chain.length);
      },
    );

    test("no other API keys but the deployment check's: Enterprise keys get theirs from the key tool", () => {
      expect(ofType(b(), 'AWS::ApiGateway::ApiKey')).toHaveLength(fixedPlans.length * pooledKeysKept(config) + 1);
      b().template.hasOutput('MeteringKeysPerPlan', { Value: String(config.meteringKeysPerPlan) });
    });
  });

  describe('functions', () => {
    test('one per route plus the authorizer and the deployment check, Node.js 24 on arm64', () => {
      const functions = ofType(b(), 'AWS::Lambda::Function');
      expect(functions).toHaveLength(routes.length + 2);
      const checkId = logicalId(b(), b().stack.deploymentCheck);
      for (const [id, fn] of functions) {
        expect(fn.Properties).toMatchObject({
          Runtime: 'nodejs24.x',
          Architectures: ['arm64'],
          MemorySize: 512,
          Timeout: id === checkId ? deploymentCheckFunction.timeoutSeconds : 10,
          Handler: 'index.handler',
          TracingConfig: { Mode: 'Active' },
        });
      }
    });

    test.each(functionSpecs.map((spec) => [spec.id, spec] as const))(
      '%s: environment names exactly the tables it may use; own log group',
      (_, spec) => {
        const fn = b().resources[logicalId(b(), spec.fn(b()))]!;
        const tableVars = Object.fromEntries(
          (Object.keys(spec.access) as TableName[]).map((table) => [
            tables[table].envVar,
            { Ref: logicalId(b(), b().stack.tables[table]) },
          ]),
        );
        expect(fn.Properties.Environment.Variables).toEqual({
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'petstore',
          [businessMetrics.stageEnvVar]: stage,
          // The name the local runtime gives the same function (definitions/routes.ts, lambdaFunctions): its metrics' `function`.
          [businessMetrics.functionEnvVar]: spec.id,
          ...tableVars,
          ...(spec.id === 'authorizer'
            ? {
                [meteringPoolEnvironment.prefix]: expect.anything(),
                [meteringPoolEnvironment.keysPerPlan]: String(config.meteringKeysPerPlan),
              }
            : {}),
        });
        const logGroup = b().resources[fn.Properties.LoggingConfig.LogGroup.Ref]!;
        expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
        expect(logGroup.Properties.RetentionInDays).toBe(config.logRetention);
      },
    );

    test.each(functionSpecs.map((spec) => [spec.id, spec] as const))(
      '%s: IAM allows exactly the DynamoDB actions of its access map',
      (_, spec) => {
        const fn = b().resources[logicalId(b(), spec.fn(b()))]!;
        const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
        const role = b().resources[roleId]!;
        // No AWS-managed policy (AWSLambdaBasicExecutionRole grants logs on every log group), no inline extras.
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
        expect(role.Properties.Policies).toBeUndefined();
        expect(grantedPairs(b(), roleId, (action) => action.startsWith('dynamodb:') || action === '*')).toEqual(
          expectedPairs(b(), spec.access),
        );
        // Logs only into its own log group.
        const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref as string;
        expect(grantedPairs(b(), roleId, (action) => action.startsWith('logs:'))).toEqual([
          `logs:CreateLogStream on ${logGroupId}`,
          `logs:PutLogEvents on ${logGroupId}`,
        ]);
      },
    );

    test('no policy anywhere grants dynamodb:*, Scan, BatchWriteItem or * (DeleteItem only where the route table lists it: idempotency records)', () => {
      for (const [, policy] of ofType(b(), 'AWS::IAM::Policy')) {
        for (const statement of policy.Properties.PolicyDocument.Statement as Json[]) {
          for (const action of asArray<string>(statement.Action)) {
            expect(action).not.toMatch(/^(\*|dynamodb:\*|dynamodb:Scan|dynamodb:BatchWriteItem)$/);
          }
        }
      }
    });
  });

  describe('tables', () => {
    test('one per entry of definitions/tables.ts', () => {
      expect(ofType(b(), 'AWS::DynamoDB::Table')).toHaveLength(tableNames.length);
    });

    test.each(tableNames)('%s: keys, indexes, TTL, on demand, AWS-managed encryption', (name) => {
      const definition: TableDefinition = tables[name];
      const props = b().resources[logicalId(b(), b().stack.tables[name])]!.Properties;
      const keySchema = (key: { partitionKey: { name: string }; sortKey?: { name: string } }) => [
        { AttributeName: key.partitionKey.name, KeyType: 'HASH' },
        ...(key.sortKey ? [{ AttributeName: key.sortKey.name, KeyType: 'RANGE' }] : []),
      ];
      expect(props.KeySchema).toEqual(keySchema(definition));
      expect(props.BillingMode).toBe('PAY_PER_REQUEST');
      expect(props.SSESpecification).toEqual({ SSEEnabled: true });
      const indexes = (props.GlobalSecondaryIndexes ?? []) as Json[];
      expect(indexes.map((index) => index.IndexName).sort()).toEqual(definition.indexes.map((index) => index.name).sort());
      for (const index of definition.indexes) {
        expect(indexes.find((candidate) => candidate.IndexName === index.name)).toEqual({
          IndexName: index.name,
          KeySchema: keySchema(index),
          Projection: { ProjectionType: 'ALL' },
        });
      }
      const keyAttributes = [
        definition.partitionKey,
        definition.sortKey,
        ...definition.indexes.flatMap((index) => [index.partitionKey, index.sortKey]),
      ];
      for (const key of keyAttributes) {
        if (key) expect(props.AttributeDefinitions).toContainEqual({ AttributeName: key.name, AttributeType: key.type });
      }
      if (definition.timeToLiveAttribute) {
        expect(props.TimeToLiveSpecification).toEqual({ AttributeName: definition.timeToLiveAttribute, Enabled: true });
      } else {
        expect(props.TimeToLiveSpecification).toBeUndefined();
      }
    });

    if (stage === 'production') {
      test.each(tableNames)(
        '%s: point-in-time recovery only if worth restoring, deletion protection, retained on delete and replace',
        (name) => {
          const table = b().resources[logicalId(b(), b().stack.tables[name])]!;
          const worthRestoring = ['pets', 'apiKeys'].includes(name);
          expect(tablesWorthRestoring.includes(name)).toBe(worthRestoring);
          expect(table.Properties.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled ?? false).toBe(worthRestoring);
          expect(table.Properties.DeletionProtectionEnabled).toBe(true);
          expect(table.DeletionPolicy).toBe('Retain');
          expect(table.UpdateReplacePolicy).toBe('Retain');
        },
      );
    } else {
      test.each(tableNames)('%s: disposable (no PITR, no deletion protection, deleted with the stack)', (name) => {
        const table = b().resources[logicalId(b(), b().stack.tables[name])]!;
        expect(table.Properties.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled ?? false).toBe(false);
        expect(table.Properties.DeletionProtectionEnabled ?? false).toBe(false);
        expect(table.DeletionPolicy).toBe('Delete');
      });
    }

    test('log groups keep the stage retention and follow its data policy', () => {
      const logGroups = ofType(b(), 'AWS::Logs::LogGroup');
      expect(logGroups).toHaveLength(routes.length + 4); // every function (the check's too) + the access and execution logs
      for (const [, logGroup] of logGroups) {
        expect(logGroup.Properties.RetentionInDays).toBe(config.logRetention);
        expect(logGroup.DeletionPolicy).toBe(stage === 'production' ? 'Retain' : 'Delete');
      }
    });
  });

  describe('alarms', () => {
    const alarmsOf = (b: Built) => ofType(b, 'AWS::CloudWatch::Alarm').map(([id, alarm]) => ({ id, props: alarm.Properties as Json }));
    const watching = (b: Built, namespace: string, metricName: string, dimensions: Record<string, unknown> = {}) =>
      alarmsOf(b).filter(({ props }) =>
        alarmMetrics(props).some(
          (m) =>
            m.namespace === namespace &&
            m.metricName === metricName &&
            Object.entries(dimensions).every(([name, value]) => JSON.stringify(m.dimensions[name]) === JSON.stringify(value)),
        ),
      );

    /** The alarms CodeDeploy rolls back on: those its deployment groups name. */
    const rollbackAlarmIds = (b: Built) =>
      new Set(
        ofType(b, 'AWS::CodeDeploy::DeploymentGroup').flatMap(([, g]) =>
          (g.Properties.AlarmConfiguration.Alarms as Json[]).map((a) => a.Name.Ref as string),
        ),
      );

    test('every alarm notifies the one alarm topic, is named after the stack and says what it means and what to do', () => {
      const topics = ofType(b(), 'AWS::SNS::Topic');
      expect(topics).toHaveLength(1);
      const alarms = alarmsOf(b());
      const rollback = rollbackAlarmIds(b());
      expect(alarms.length).toBeGreaterThan(rollback.size);
      for (const { id, props } of alarms) {
        expect(props.AlarmActions).toEqual([{ Ref: topics[0]![0] }]);
        // A stage-wide alarm back to OK is news too: the incident is over. A rollback alarm's is not (next test).
        if (!rollback.has(id)) expect(props.OKActions).toEqual([{ Ref: topics[0]![0] }]);
        expect(props.AlarmName).toMatch(new RegExp(`^${config.stackName}-`));
        expect(props.AlarmDescription).toMatch(/^Means: .{40,} Do: .{40,}$/s);
        expect(props.AlarmDescription.length).toBeLessThanOrEqual(1024);
        expect(props.TreatMissingData).toBe('notBreaching');
      }
      b().template.hasOutput('AlarmTopicArn', { Value: { Ref: topics[0]![0] } });
    });

    // Every deployment makes each changed function's rollback alarms anew (function-rollout.ts, versionKey),
    // and each goes from INSUFFICIENT_DATA to OK: with OK actions, 3 or 4 notifications per function
    // that say nothing, and teach operators to ignore the topic.
    test('no rollback alarm notifies when it is OK: only when it fires', () => {
      const rollback = rollbackAlarmIds(b());
      expect(rollback.size).toBeGreaterThanOrEqual(functionSpecs.length * 3);
      for (const { id, props } of alarmsOf(b()).filter(({ id }) => rollback.has(id))) {
        expect([id, props.OKActions ?? []]).toEqual([id, []]);
        expect(props.AlarmActions).toHaveLength(1);
      }
    });

    test('5xx rate: 5xx as a percentage of requests, from the stage thresholds', () => {
      const alarms = watching(b(), 'AWS/ApiGateway', '5XXError');
      expect(alarms).toHaveLength(1);
      expect(
        alarmMetrics(alarms[0]!.props)
          .map((m) => m.metricName)
          .sort(),
      ).toEqual(['5XXError', 'Count']);
      expect(alarmExpression(alarms[0]!.props)).toBe(
        `IF(requests >= ${config.alarms.serverErrorMinRequests}, 100 * FILL(errors, 0) / requests, 0)`,
      );
      expect(alarms[0]!.props.Threshold).toBe(config.alarms.serverErrorRatePercent);
    });

    test('p99 latency, from the stage thresholds', () => {
      const alarms = watching(b(), 'AWS/ApiGateway', 'Latency');
      expect(alarms).toHaveLength(1);
      expect(alarms[0]!.props).toMatchObject({
        ExtendedStatistic: 'p99',
        Threshold: config.alarms.latencyP99Ms,
        EvaluationPeriods: config.alarms.latencyPeriods,
      });
    });

    test('errors of every operation function and throttles of every function, the authorizer included', () => {
      for (const spec of functionSpecs) {
        const fn = { Ref: logicalId(b(), spec.fn(b())) };
        const errors = watching(b(), 'AWS/Lambda', 'Errors', { FunctionName: fn }).filter(
          ({ props }) => !alarmMetrics(props).some((m) => m.dimensions.ExecutedVersion),
        );
        const throttles = watching(b(), 'AWS/Lambda', 'Throttles', { FunctionName: fn });
        // Refusing a key throws "Unauthorized", which Lambda counts in Errors:
        // an alarm on the authorizer's Errors would fire for every bad key.
        expect(errors).toHaveLength(spec.id === 'authorizer' ? 0 : 1);
        expect(throttles).toHaveLength(1);
        if (errors[0]) expect(errors[0].props.Threshold).toBe(config.alarms.functionErrors);
        expect(throttles[0]!.props.Threshold).toBe(config.alarms.functionThrottles);
      }
    });

    test('the authorizer alarm watches KeyStoreFailures (keys that could not be checked) of every version, not refused keys', () => {
      // The series the authorizer's lines carry: its stage and the short name its environment gives it.
      const authorizerId = logicalId(b(), b().stack.authorizerFunction);
      const alarms = watching(b(), businessMetrics.namespace, businessMetrics.names.keyStoreFailures, {
        stage,
        function: b().resources[authorizerId]!.Properties.Environment.Variables[businessMetrics.functionEnvVar],
      }).filter(({ props }) => alarmMetrics(props).every((m) => m.dimensions.version === undefined));
      expect(alarms).toHaveLength(1);
      expect(alarms[0]!.props).toMatchObject({
        AlarmName: `${config.stackName}-authorizerKeyStoreFailures`,
        Threshold: config.alarms.functionErrors,
        Statistic: 'Sum',
      });
      expect(alarms[0]!.props.AlarmDescription).toMatch(/503/);
      expect(alarms[0]!.props.AlarmDescription).not.toMatch(/\b500\b/);
    });

    test('no alarm text promises a 500 where clients get 503', () => {
      for (const { props } of alarmsOf(b())) expect(props.AlarmDescription).not.toMatch(/got 500|with 500|\(AUTHORIZER_FAILURE\)/);
    });

    test('the alarm topic lets CloudWatch alarms of this account publish, beside the TLS-only rule', () => {
      const topicId = ofType(b(), 'AWS::SNS::Topic')[0]![0];
      const policies = ofType(b(), 'AWS::SNS::TopicPolicy');
      expect(policies).toHaveLength(1);
      expect(policies[0]![1].Properties.Topics).toEqual([{ Ref: topicId }]);
      const statements = policies[0]![1].Properties.PolicyDocument.Statement as Json[];
      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sns:Publish',
          Principal: '*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
      const allow = statements.find((statement) => statement.Effect === 'Allow')!;
      expect(allow).toMatchObject({
        Action: 'sns:Publish',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Resource: { Ref: topicId },
      });
      expect(allow.Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
      expect(JSON.stringify(allow.Condition.ArnLike['aws:SourceArn'])).toContain(`:alarm:${config.stackName}-*`);
    });

    test.each(tableNames)('%s: read and write throttling of the table and each of its indexes', (name) => {
      const table = { Ref: logicalId(b(), b().stack.tables[name]) };
      for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
        const alarms = watching(b(), 'AWS/DynamoDB', metricName, { TableName: table }).filter(({ props }) =>
          alarmMetrics(props).some((m) => m.metricName === metricName && m.dimensions.GlobalSecondaryIndexName === undefined),
        );
        expect(alarms).toHaveLength(1);
        const indexes = alarmMetrics(alarms[0]!.props)
          .filter((m) => m.dimensions.GlobalSecondaryIndexName !== undefined)
          .map((m) => m.dimensions.GlobalSecondaryIndexName);
        expect(indexes.sort()).toEqual(tables[name].indexes.map((index) => index.name).sort());
        expect(alarms[0]!.props.Threshold).toBe(config.alarms.dynamoDbThrottles);
      }
    });

    test('a spike of 429s: the RateLimited metric of every plan of plans.ts, summed', () => {
      const alarms = watching(b(), businessMetrics.namespace, businessMetrics.names.rateLimited);
      expect(alarms).toHaveLength(1);
      const metrics = alarmMetrics(alarms[0]!.props);
      expect(metrics.map((m) => m.dimensions)).toEqual(planNames.map((plan) => ({ plan, service: businessMetrics.serviceName, stage })));
      expect(metrics.every((m) => m.stat === 'Sum')).toBe(true);
      expect(alarmExpression(alarms[0]!.props)).toBe(planNames.map((plan) => `FILL(${plan}, 0)`).join(' + '));
      expect(alarms[0]!.props).toMatchObject({
        Threshold: config.alarms.rateLimitedPerFiveMinutes,
        EvaluationPeriods: config.alarms.rateLimitedPeriods,
      });
    });

    test('each sharded list index: its busiest shard, estimated from the index, nearing the limit of one partition', () => {
      for (const indexName of Object.values(petIndexes)) {
        const alarms = watching(b(), 'AWS/DynamoDB', 'ConsumedWriteCapacityUnits', {
          TableName: { Ref: logicalId(b(), b().stack.tables.pets) },
          GlobalSecondaryIndexName: indexName,
        });
        expect(alarms).toHaveLength(1);
        expect(alarmExpression(alarms[0]!.props)).toBe(
          `FILL(writes, 0) / PERIOD(writes) * ${listSharding.expectedImbalance} / ${listSharding.shardCount}`,
        );
        expect(alarms[0]!.props).toMatchObject({ Threshold: config.alarms.listShardWritesPerSecond, EvaluationPeriods: 3 });
      }
    });

    test('every index an alarm watches exists (definitions/tables.ts)', () => {
      const indexNames = new Set(tableNames.flatMap((name) => tables[name].indexes.map((index) => index.name)));
      const watched = alarmsOf(b())
        .flatMap(({ props }) => alarmMetrics(props))
        .map((m) => m.dimensions.GlobalSecondaryIndexName)
        .filter((name) => name !== undefined);
      expect(watched.length).toBeGreaterThan(0);
      for (const name of watched) expect(indexNames).toContain(name);
    });

    test('every alarm on a custom-namespace metric reads only this stage (its `stage` dimension)', () => {
      const custom = alarmsOf(b())
        .flatMap(({ props }) => alarmMetrics(props))
        .filter((m) => !m.namespace.startsWith('AWS/'));
      expect(custom.length).toBeGreaterThan(0);
      for (const metric of custom) expect(metric.dimensions.stage).toBe(stage);
    });

    test('no other alarms', () => {
      // 5xx rate and latency; errors (key-store failures for the authorizer) and throttles per function; reads and writes per table; 429s;
      // the busiest shard of each list index; rollback alarms: each operation's new version's 500s, 503s, latency and crashes,
      // the authorizer's refused keys, unchecked keys and latency.
      const listIndexes = Object.values(petIndexes).length;
      expect(alarmsOf(b())).toHaveLength(2 + 2 * functionSpecs.length + 2 * tableNames.length + 1 + listIndexes + (4 * routes.length + 3));
    });
  });

  describe('rollout', () => {
    const deploymentConfigs = () => ofType(b(), 'AWS::CodeDeploy::DeploymentConfig');

    test(`every function is published as a version behind the "${LIVE_ALIAS}" alias, and API Gateway invokes only aliases`, () => {
      const versions = ofType(b(), 'AWS::Lambda::Version');
      for (const spec of functionSpecs) {
        const alias = b().resources[aliasId(b(), spec.fn(b()))]!;
        expect(alias.Type).toBe('AWS::Lambda::Alias');
        expect(alias.Properties.Name).toBe(LIVE_ALIAS);
        expect(alias.Properties.FunctionName).toEqual({ Ref: logicalId(b(), spec.fn(b())) });
        const versionId = alias.Properties.FunctionVersion['Fn::GetAtt'][0] as string;
        expect(versions.map(([id]) => id)).toContain(versionId);
        expect(b().resources[versionId]!.Properties.FunctionName).toEqual({ Ref: logicalId(b(), spec.fn(b())) });
      }
      // No method or authorizer calls a function's $LATEST.
      const invoked = [
        ...ofType(b(), 'AWS::ApiGateway::Method').map(([, m]) => m.Properties.Integration.Uri),
        ...ofType(b(), 'AWS::ApiGateway::Authorizer').map(([, a]) => a.Properties.AuthorizerUri),
      ].map((uri) => JSON.stringify(uri));
      for (const spec of functionSpecs) {
        for (const uri of invoked) expect(uri).not.toContain(`"${logicalId(b(), spec.fn(b()))}"`);
      }
    });

    test(`${stage} deploys ${config.rollout === 'canary' ? `by canary (${canary.percentage} % for ${canary.intervalMinutes} minutes)` : 'at once'}, from the one canary setting`, () => {
      const configs = deploymentConfigs();
      expect(configs).toHaveLength(1);
      expect(configs[0]![1].Properties.TrafficRoutingConfig).toEqual(
        config.rollout === 'canary'
          ? { Type: 'TimeBasedCanary', TimeBasedCanary: { CanaryInterval: canary.intervalMinutes, CanaryPercentage: canary.percentage } }
          : { Type: 'AllAtOnce' },
      );
      const groups = ofType(b(), 'AWS::CodeDeploy::DeploymentGroup');
      expect(groups).toHaveLength(functionSpecs.length);
      for (const [, group] of groups) {
        expect(group.Properties.DeploymentConfigName).toEqual({ Ref: configs[0]![0] });
        expect(group.Properties.AutoRollbackConfiguration).toEqual({
          Enabled: true,
          Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']),
        });
      }
    });

    // CodeDeploy stops and rolls back a deployment when any alarm of its group
    // is in ALARM, whatever made it fire ("Monitoring deployments with
    // CloudWatch alarms in CodeDeploy",
    // https://docs.aws.amazon.com/codedeploy/latest/userguide/monitoring-create-alarms.html):
    // so each group watches only its own function's versions.
    const groupAlarms = (spec: (typeof functionSpecs)[number]) => {
      const groups = ofType(b(), 'AWS::CodeDeploy::DeploymentGroup').filter(([id]) => id.includes(`Rollout${spec.id}Deployment`));
      expect(groups).toHaveLength(1);
      const alarmConfig = groups[0]![1].Properties.AlarmConfiguration;
      expect(alarmConfig.Enabled).toBe(true);
      return (alarmConfig.Alarms as Json[]).map((alarm) => b().resources[alarm.Name.Ref]!.Properties as Json);
    };
    const names = businessMetrics.names;
    const canaryMetricNames = (spec: (typeof functionSpecs)[number]) =>
      spec.id === 'authorizer'
        ? [names.keyCheckLatency, names.keyStoreFailures, names.keysRefused]
        : [names.answerLatency, names.serverErrors, names.unavailable];

    test("every rollback alarm reads its own function's new version (and for comparisons, the function across versions), in 1-minute periods inside the canary's interval", () => {
      const { evaluationPeriods } = rollbackAlarmEvaluation();
      for (const spec of functionSpecs) {
        const fnId = logicalId(b(), spec.fn(b()));
        const versionId = b().resources[aliasId(b(), spec.fn(b()))]!.Properties.FunctionVersion['Fn::GetAtt'][0] as string;
        const alarms = groupAlarms(spec);
        expect(alarms).toHaveLength(spec.id === 'authorizer' ? 3 : 4);
        for (const alarm of alarms) {
          const metrics = alarmMetrics(alarm);
          // At least one series of the new version itself in every alarm.
          expect(
            metrics.some(
              (m) =>
                JSON.stringify(m.dimensions.version ?? m.dimensions.ExecutedVersion) ===
                JSON.stringify({ 'Fn::GetAtt': [versionId, 'Version'] }),
            ),
          ).toBe(true);
          for (const m of metrics) {
            if (m.namespace === 'AWS/Lambda') {
              expect(m.dimensions).toEqual({
                FunctionName: { Ref: fnId },
                Resource: { 'Fn::Join': ['', [{ Ref: fnId }, `:${LIVE_ALIAS}`]] },
                ExecutedVersion: { 'Fn::GetAtt': [versionId, 'Version'] },
              });
              continue;
            }
            expect(m.namespace).toBe(businessMetrics.namespace);
            expect(canaryMetricNames(spec)).toContain(m.metricName);
            const { version, ...rest } = m.dimensions;
            // The function's short name, the one its environment gives its lines (PETSTORE_FUNCTION).
            const fnEnvironment = b().resources[fnId]!.Properties.Environment.Variables;
            expect(rest).toEqual({ function: fnEnvironment[businessMetrics.functionEnvVar], stage });
            if (version !== undefined) expect(version).toEqual({ 'Fn::GetAtt': [versionId, 'Version'] });
          }
          const period = alarm.Period ?? (alarm.Metrics as Json[]).find((q) => q.MetricStat)!.MetricStat.Period;
          // Per minute, or (failure shares) one sliding period of the whole window, judged every minute.
          expect([
            [60, evaluationPeriods],
            [canaryVerdict.windowMinutes * 60, 1],
          ]).toContainEqual([period, alarm.EvaluationPeriods]);
          expect(period * alarm.EvaluationPeriods).toBeLessThanOrEqual(canary.intervalMinutes * 60);
          expect(alarm.TreatMissingData).toBe('notBreaching');
        }
      }
    });

    test('a new version rolls back on its own 500s and crashes; on 503s, refused or unchecked keys and latency only where worse than the old version by a margin', () => {
      for (const spec of functionSpecs) {
        const alarms = groupAlarms(spec);
        const absolute = alarms
          .filter((alarm) => alarm.MetricName)
          .map((alarm) => alarm.MetricName)
          .sort();
        expect(absolute).toEqual(spec.id === 'authorizer' ? [] : ['Errors', names.serverErrors]);
        for (const alarm of alarms.filter((a) => a.MetricName)) expect(alarm.Threshold).toBe(rollbackThresholds.serverErrorsPerMinute);
        const compared = alarms.filter((alarm) => alarm.Metrics);
        expect(
          compared
            .map(
              (alarm) =>
                alarmMetrics(alarm).find((m) => m.metricName !== (spec.id === 'authorizer' ? names.keyCheckLatency : names.answerLatency))
                  ?.metricName ?? 'latency',
            )
            .sort(),
        ).toEqual(
          spec.id === 'authorizer' ? [names.keyStoreFailures, names.keysRefused, 'latency'].sort() : [names.unavailable, 'latency'].sort(),
        );
        for (const alarm of compared) {
          // The old version is the function across versions less the new one: no version number needed at synth.
          expect(alarmExpression(alarm)).toMatch(/^IF\(FILL\(newCalls, 0\) >= \d+ AND \(FILL\(allCalls, 0\) - FILL\(newCalls, 0\)\) > 0, /);
          expect(alarmExpression(alarm)).toContain(`>= ${rollbackThresholds.minCalls} AND`);
          expect([rollbackThresholds.rateMarginPercent, rollbackThresholds.latencyMarginMs]).toContain(alarm.Threshold);
        }
      }
    });

    test('no rollback alarm reads a stage-wide metric: API Gateway, a function across every version alone, or the business metrics', () => {
      for (const spec of functionSpecs) {
        for (const alarm of groupAlarms(spec)) {
          const metrics = alarmMetrics(alarm);
          expect(metrics.map((m) => m.namespace)).not.toContain('AWS/ApiGateway');
          expect(metrics.every((m) => m.namespace !== 'AWS/Lambda' || m.dimensions.ExecutedVersion !== undefined)).toBe(true);
          expect(metrics.every((m) => m.namespace === 'AWS/Lambda' || m.dimensions.function !== undefined)).toBe(true);
          expect(metrics.some((m) => m.dimensions.version !== undefined || m.dimensions.ExecutedVersion !== undefined)).toBe(true);
        }
      }
      // And none of the stage-wide alarms is in a group.
      const inGroups = new Set(
        ofType(b(), 'AWS::CodeDeploy::DeploymentGroup').flatMap(([, g]) =>
          (g.Properties.AlarmConfiguration.Alarms as Json[]).map((a) => a.Name.Ref),
        ),
      );
      for (const alarm of b().stack.alarms.alarms) expect(inGroups.has(logicalId(b(), alarm))).toBe(false);
    });
  });

  describe('pre-traffic check', () => {
    const checkId = () => logicalId(b(), b().stack.deploymentCheck);

    test("is the BeforeAllowTraffic hook of every function's deployment (CodeDeploy waits for its verdict before moving traffic)", () => {
      const aliases = ofType(b(), 'AWS::Lambda::Alias');
      expect(aliases).toHaveLength(functionSpecs.length);
      for (const [, alias] of aliases) {
        expect(alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook).toEqual({ Ref: checkId() });
        // Updated first, so that it knows the new versions and may call them.
        expect(alias.DependsOn).toContain(checkId());
      }
    });

    test("calls every function's new version and its live alias, and nothing else of Lambda's", () => {
      const fn = b().resources[checkId()]!;
      const targets = JSON.stringify(fn.Properties.Environment.Variables[deploymentCheckEnvironment.targets]);
      const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
      const invokable = grantedPairs(b(), roleId, (action) => action.startsWith('lambda:'));
      expect(invokable).toHaveLength(2 * functionSpecs.length);
      for (const spec of functionSpecs) {
        const fnId = logicalId(b(), spec.fn(b()));
        const versionId = b().resources[aliasId(b(), spec.fn(b()))]!.Properties.FunctionVersion['Fn::GetAtt'][0] as string;
        expect(targets).toContain(versionId);
        expect(invokable.some((pair) => pair.includes(versionId))).toBe(true);
        expect(invokable.some((pair) => pair.includes(fnId) && pair.includes(`:${LIVE_ALIAS}`))).toBe(true);
      }
      expect(grantedPairs(b(), roleId, (action) => action.startsWith('codedeploy:'))).not.toHaveLength(0);
      expect(grantedPairs(b(), roleId, (action) => action.startsWith('dynamodb:'))).toEqual(
        expectedPairs(b(), deploymentCheckFunction.access),
      );
    });

    test("its key is metered apart: a generated secret only the check reads, a usage plan and API key of its own that no customer's plan holds", () => {
      const secrets = ofType(b(), 'AWS::SecretsManager::Secret');
      expect(secrets).toHaveLength(1);
      const [secretId, secret] = secrets[0]!;
      expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 43, ExcludePunctuation: true, IncludeSpace: false });
      const fn = b().resources[checkId()]!;
      expect(fn.Properties.Environment.Variables[deploymentCheckEnvironment.secretArn]).toEqual({ Ref: secretId });
      const readers = ofType(b(), 'AWS::IAM::Policy').filter(([, policy]) =>
        JSON.stringify(policy).includes('secretsmanager:GetSecretValue'),
      );
      expect(readers.flatMap(([, policy]) => policy.Properties.Roles)).toEqual([{ Ref: fn.Properties.Role['Fn::GetAtt'][0] }]);
      const [planId] = ofType(b(), 'AWS::ApiGateway::UsagePlan').find(
        ([, p]) => p.Properties.UsagePlanName === `petstore-${stage}-deployment-check`,
      )!;
      const links = ofType(b(), 'AWS::ApiGateway::UsagePlanKey').filter(([, link]) => link.Properties.UsagePlanId.Ref === planId);
      expect(links).toHaveLength(1);
      const keyId = links[0]![1].Properties.KeyId.Ref as string;
      expect(b().resources[keyId]!.Properties.Name).toBe(`petstore-${stage}-deployment-check`);
      expect(fn.Properties.Environment.Variables[deploymentCheckEnvironment.meteringKey]).toEqual(b().resources[keyId]!.Properties.Value);
      expect(ofType(b(), 'AWS::ApiGateway::UsagePlanKey').filter(([, link]) => link.Properties.KeyId.Ref === keyId)).toHaveLength(1);
    });
  });

  describe('operations hygiene', () => {
    test("API Gateway's execution log group belongs to the stack, with the stage's retention, before the stage exists", () => {
      const restApiId = ofType(b(), 'AWS::ApiGateway::RestApi')[0]![0];
      const [stageId, stageResource] = ofType(b(), 'AWS::ApiGateway::Stage')[0]!;
      const execution = ofType(b(), 'AWS::Logs::LogGroup').filter(([, group]) =>
        JSON.stringify(group.Properties.LogGroupName ?? '').includes('API-Gateway-Execution-Logs_'),
      );
      expect(execution).toHaveLength(1);
      const [executionId, group] = execution[0]!;
      expect(group.Properties.LogGroupName).toEqual({
        'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: restApiId }, `/${stageName}`]],
      });
      expect(group.Properties.RetentionInDays).toBe(config.logRetention);
      expect(asArray(stageResource.DependsOn ?? [])).toContain(executionId);
      expect(stageId).toBeDefined();
      const props = stageResource.Properties;
      expect(props.MethodSettings).toEqual(
        expect.arrayContaining([expect.objectContaining({ LoggingLevel: 'ERROR', DataTraceEnabled: false })]),
      );
    });

    // "New AWS accounts have reduced concurrency and memory quotas" ("Lambda quotas",
    // https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html): a reservation the
    // account cannot give fails the first deployment, so none without the declared quota.
    test('no reserved concurrency anywhere unless the operator declares the account quota', () => {
      const reserved = Object.values(b().resources).filter((r) => r.Properties?.ReservedConcurrentExecutions !== undefined);
      expect(reserved).toEqual([]);
      expect(JSON.stringify(b().resources)).not.toContain('ReservedConcurrentExecutions');
    });

    test(`with the quota declared, the authorizer may take at most ${config.authorizerReservedConcurrency} concurrent executions; the operations share the rest`, () => {
      const c = configured[stage];
      for (const spec of functionSpecs) {
        const fn = c.resources[logicalId(c, spec.fn(c))]!;
        expect(fn.Properties.ReservedConcurrentExecutions).toBe(
          spec.id === 'authorizer' ? config.authorizerReservedConcurrency : undefined,
        );
      }
      // Below the region's default 1,000, leaving the required 100 unreserved.
      expect(config.authorizerReservedConcurrency).toBeLessThanOrEqual(900);
    });

    test('a failure to check a key answers 503 service_unavailable with Retry-After, whichever response type API Gateway picks', () => {
      const responses = ofType(b(), 'AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties);
      for (const type of ['AUTHORIZER_CONFIGURATION_ERROR', 'AUTHORIZER_FAILURE']) {
        const props = responses.find((r) => r.ResponseType === type)!;
        expect(props.StatusCode).toBe('503');
        expect(JSON.parse(props.ResponseTemplates['application/json'])).toMatchObject({ code: 'service_unavailable', status: 503 });
        expect(Number(props.ResponseParameters['gatewayresponse.header.Retry-After'].replace(/'/g, ''))).toBeGreaterThan(0);
      }
    });
  });

  describe('dashboard', () => {
    test('one, named in the outputs with its console URL', () => {
      const dashboards = ofType(b(), 'AWS::CloudWatch::Dashboard');
      expect(dashboards).toHaveLength(1);
      const name = dashboards[0]![1].Properties.DashboardName;
      expect(JSON.stringify(name)).toContain(config.stackName);
      expect(b().outputs.DashboardName?.Value).toEqual(name);
      expect(JSON.stringify(b().outputs.DashboardUrl?.Value)).toContain('#dashboards:name=');
    });

    test('shows the state of every alarm', () => {
      const widget = (dashboardBody(b()).widgets as Json[]).find((w) => w.type === 'alarm');
      const alarmArns = ofType(b(), 'AWS::CloudWatch::Alarm').map(([id]) => `<GetAtt:${id}.Arn>`);
      expect([...widget!.properties.alarms].sort()).toEqual(alarmArns.sort());
    });

    test("the API's requests, 4xx, 5xx and latency p50 and p99", () => {
      const lines = dashboardMetricLines(b());
      const api = `"ApiName","petstore-${stage}"`;
      for (const [metricName, stat] of [
        ['Count', 'Sum'],
        ['4XXError', 'Sum'],
        ['5XXError', 'Sum'],
        ['Latency', 'p50'],
        ['Latency', 'p99'],
      ]) {
        expect(
          lines.filter((line) => line.includes(`"AWS/ApiGateway","${metricName}",${api}`) && line.includes(`"stat":"${stat}"`)),
        ).toHaveLength(1);
      }
    });

    test("each function's errors, throttles and duration (p50, p99)", () => {
      const lines = dashboardMetricLines(b());
      for (const spec of functionSpecs) {
        const fn = `"FunctionName","<Ref:${logicalId(b(), spec.fn(b()))}>"`;
        for (const metricName of ['Errors', 'Throttles']) {
          expect(lines.filter((line) => line.includes(`"AWS/Lambda","${metricName}",${fn}`))).toHaveLength(1);
        }
        expect(lines.filter((line) => line.includes(`"AWS/Lambda","Duration",${fn}`))).toHaveLength(2);
      }
      // Beside the authorizer's Errors (which every refused key raises): the keys it could not check.
      expect(
        lines.filter((line) => line.includes(`"${businessMetrics.namespace}","${businessMetrics.names.keyStoreFailures}"`)),
      ).toHaveLength(1);
    });

    test('DynamoDB throttles of every table and index', () => {
      const lines = dashboardMetricLines(b());
      for (const name of tableNames) {
        const table = `"TableName","<Ref:${logicalId(b(), b().stack.tables[name])}>"`;
        for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
          const ofTable = lines.filter((line) => line.includes(`"AWS/DynamoDB","${metricName}",`) && line.includes(table));
          expect(ofTable.filter((line) => !line.includes('GlobalSecondaryIndexName'))).toHaveLength(1);
          for (const index of tables[name].indexes) {
            expect(ofTable.filter((line) => line.includes(`"GlobalSecondaryIndexName","${index.name}"`))).toHaveLength(1);
          }
        }
      }
    });

    test("the busiest list shard's writes, per sharded list index, and no index that does not exist", () => {
      const lines = dashboardMetricLines(b());
      for (const indexName of Object.values(petIndexes)) {
        expect(
          lines.filter(
            (line) =>
              line.includes('"AWS/DynamoDB","ConsumedWriteCapacityUnits",') && line.includes(`"GlobalSecondaryIndexName","${indexName}"`),
          ),
        ).toHaveLength(1);
      }
      const expression = lines.find((line) => line.includes(`* ${listSharding.expectedImbalance} / ${listSharding.shardCount}`));
      expect(expression).toBeDefined();
      const indexNames = tableNames.flatMap((name) => tables[name].indexes.map((index) => index.name));
      for (const line of lines) {
        const index = /"GlobalSecondaryIndexName","([^"]+)"/.exec(line)?.[1];
        if (index !== undefined) expect(indexNames).toContain(index);
      }
    });

    test('the business metrics: PetsCreated, ClientErrors by code, RateLimited by plan', () => {
      const lines = dashboardMetricLines(b());
      const { namespace, names, serviceName } = businessMetrics;
      expect(lines.some((line) => line.includes(`"${namespace}","${names.petsCreated}","service","${serviceName}"`))).toBe(true);
      const search = lines.find((line) => line.includes('SEARCH(') && line.includes(names.clientErrors));
      expect(search).toContain(`{${namespace},code,service,stage}`);
      expect(search).toContain(`stage=\\"${stage}\\"`);
      expect(search).toContain(names.clientErrors);
      for (const plan of planNames) {
        expect(
          lines.filter((line) => line.includes(`"${namespace}","${names.rateLimited}"`) && line.includes(`"plan","${plan}"`)),
        ).toHaveLength(1);
      }
    });

    // A SEARCH matches only metrics with exactly the dimensions of its schema: a stale schema draws empty graphs.
    test("the by-version graphs search exactly the dimensions the functions' canary lines carry", () => {
      const { namespace, names } = businessMetrics;
      const written = (latency: typeof names.answerLatency | typeof names.keyCheckLatency) =>
        JSON.parse(canaryLines({ stage, function: 'f', version: '1' }, latency)(0, 1)) as Json;
      const lines = dashboardMetricLines(b());
      for (const [latency, counted] of [
        [names.answerLatency, [names.serverErrors, names.unavailable]],
        [names.keyCheckLatency, [names.keysRefused, names.keyStoreFailures]],
      ] as const) {
        const [withVersion] = written(latency)._aws.CloudWatchMetrics[0].Dimensions as string[][];
        for (const metricName of [latency, ...counted]) {
          const searches = lines.filter((line) => line.includes('SEARCH(') && line.includes(`MetricName=\\"${metricName}\\"`));
          expect(searches.length).toBeGreaterThan(0);
          for (const search of searches) {
            const schema = /SEARCH\('\{([^}]+)\}/.exec(search)![1]!.split(',');
            expect(schema[0]).toBe(namespace);
            expect(schema.slice(1).sort()).toEqual([...withVersion!].sort());
          }
        }
      }
    });
  });

  describe('custom domain and WAF', () => {
    test('custom domain off by default: ApiUrl on execute-api', () => {
      for (const type of ['AWS::ApiGateway::DomainName', 'AWS::ApiGateway::BasePathMapping']) expect(ofType(b(), type)).toHaveLength(0);
      expect(JSON.stringify(b().outputs.ApiUrl?.Value)).toContain('.execute-api.');
      expect(b().outputs.CustomDomainTarget).toBeUndefined();
    });

    /**
     * The body-size rule, on every stage (docs/api-gateway-behaviour.md,
     * "Request bodies"): a body over 16 KiB is blocked with our Error object,
     * 413, before API Gateway; WAF sees 16 KB of a body for API Gateway and
     * MATCHes anything longer, so the size compare holds for any body.
     */
    test('a web ACL on the stage by default: bodies over 16 KiB get 413 with our Error object; the per-key rate rule; no per-IP rule; no APIG3 acknowledgment', () => {
      const acls = ofType(b(), 'AWS::WAFv2::WebACL');
      expect(acls).toHaveLength(1);
      const acl = acls[0]![1].Properties;
      expect(acl.Scope).toBe('REGIONAL');
      expect(acl.DefaultAction).toEqual({ Allow: {} });
      expect(acl.AssociationConfig).toEqual({ RequestBody: { API_GATEWAY: { DefaultSizeInspectionLimit: 'KB_16' } } });
      expect(acl.Rules.map((candidate: Json) => candidate.Name)).toEqual(['body-size', 'per-key-rate']);
      expect(acl.Rules[1].Statement.RateBasedStatement.Limit).toBe(defaultWafRequestsPerKeyPerMinute);
      const rule = acl.Rules[0];
      expect(rule.Priority).toBe(0);
      expect(rule.Statement.SizeConstraintStatement).toEqual({
        FieldToMatch: { Body: { OversizeHandling: 'MATCH' } },
        ComparisonOperator: 'GT',
        Size: 16 * 1024,
        TextTransformations: [{ Priority: 0, Type: 'NONE' }],
      });
      const response = rule.Action.Block.CustomResponse;
      expect(response.ResponseCode).toBe(413);
      const body = acl.CustomResponseBodies[response.CustomResponseBodyKey];
      expect(body.ContentType).toBe('APPLICATION_JSON');
      expect(body.Content).toBe(oversizeBodyAnswer.body);
      expect(JSON.parse(body.Content)).toMatchObject({ code: 'payload_too_large', status: 413 });
      const associations = ofType(b(), 'AWS::WAFv2::WebACLAssociation');
      expect(associations).toHaveLength(1);
      expect(associations[0]![1].Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [acls[0]![0], 'Arn'] });
      expect(JSON.stringify(associations[0]![1].Properties.ResourceArn)).toContain(
        `{"Ref":"${ofType(b(), 'AWS::ApiGateway::Stage')[0]![0]}"}`,
      );
      expect(b().outputs.WebAclArn?.Value).toEqual({ 'Fn::GetAtt': [acls[0]![0], 'Arn'] });
      expect(acknowledgments(b().stack).filter((ack) => ack.id.startsWith('AwsSolutions-APIG3'))).toEqual([]);
    });

    /**
     * One key, one bucket (decision 7): the per-key rule counts the
     * Authorization value after WAF's text transformations, applied here as
     * AWS describes them ("Text transformation options",
     * https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-transformation.html):
     * COMPRESS_WHITE_SPACE turns \f, \t, \n, \r, \v and the non-breaking
     * space into spaces and runs of spaces into one; LOWERCASE lowercases A-Z.
     */
    test("the per-key rate rule's key normalises case and white space: every form of one key counts in one bucket", () => {
      const acl = ofType(b(), 'AWS::WAFv2::WebACL')[0]![1].Properties;
      const perKey = acl.Rules.find((candidate: Json) => candidate.Name === 'per-key-rate');
      const [customKey] = perKey.Statement.RateBasedStatement.CustomKeys;
      expect(customKey).toEqual({ Header: { Name: 'authorization', TextTransformations: perKeyTextTransformations } });
      const documented: Record<string, (value: string) => string> = {
        COMPRESS_WHITE_SPACE: (value) => value.replace(/[\f\t\n\r\v\u00a0]/g, ' ').replace(/ {2,}/g, ' '),
        LOWERCASE: (value) => value.replace(/[A-Z]/g, (letter) => letter.toLowerCase()),
      };
      const bucketOf = (value: string) =>
        [...customKey.Header.TextTransformations]
          .sort((x: Json, y: Json) => x.Priority - y.Priority)
          .reduce((text: string, step: Json) => documented[step.Type]!(text), value);
      const key = `psk_${'Ab1_-'.repeat(8)}xyz`;
      const variants = [`bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`, `bEaReR \t ${key}`, `Bearer\u00a0${key}`];
      expect(new Set(variants.map(bucketOf))).toEqual(new Set([bucketOf(`Bearer ${key}`)]));
      // Another key is another bucket.
      expect(bucketOf(`Bearer ${key.replace('x', 'w')}`)).not.toBe(bucketOf(`Bearer ${key}`));
    });

    const c = (): Built => configured[stage];

    test('configured: a regional domain with TLS 1.2 and the base path v1, and ApiUrl on it', () => {
      const context = configuredContext(stage);
      const domains = ofType(c(), 'AWS::ApiGateway::DomainName');
      expect(domains).toHaveLength(1);
      expect(domains[0]![1].Properties).toMatchObject({
        DomainName: context[`${stage}DomainName`],
        EndpointConfiguration: { Types: ['REGIONAL'] },
        RegionalCertificateArn: context[`${stage}CertificateArn`],
        SecurityPolicy: 'TLS_1_2',
      });
      const mappings = ofType(c(), 'AWS::ApiGateway::BasePathMapping');
      expect(mappings).toHaveLength(1);
      expect(mappings[0]![1].Properties).toEqual({
        BasePath: stageName,
        DomainName: { Ref: domains[0]![0] },
        RestApiId: { Ref: logicalId(c(), c().stack.api) },
        Stage: { Ref: ofType(c(), 'AWS::ApiGateway::Stage')[0]![0] },
      });
      expect(c().outputs.ApiUrl?.Value).toBe(`https://${context[`${stage}DomainName`]}/${stageName}`);
      expect(c().outputs.CustomDomainTarget?.Value).toEqual({ 'Fn::GetAtt': [domains[0]![0], 'RegionalDomainName'] });
      expect(JSON.stringify(c().outputs.ExecuteApiUrl?.Value)).toContain('.execute-api.');
    });

    test('configured: the web ACL adds the per-IP rate rule; the per-key and per-IP rules answer 429 with our Error object', () => {
      const acls = ofType(c(), 'AWS::WAFv2::WebACL');
      expect(acls).toHaveLength(1);
      const acl = acls[0]![1].Properties;
      expect(acl.Scope).toBe('REGIONAL');
      expect(acl.DefaultAction).toEqual({ Allow: {} });
      expect(acl.Rules.map((candidate: Json) => candidate.Name)).toEqual(['body-size', 'per-key-rate', 'per-ip-rate']);
      const [, perKey, perIp] = acl.Rules;
      expect(perIp.Statement.RateBasedStatement).toEqual({
        AggregateKeyType: 'IP',
        Limit: Number(configuredContext(stage)[`${stage}WafRateLimit`]),
        EvaluationWindowSec: 60,
      });
      // One count per Authorization value: one customer's key, capped above what any fixed plan allows in 60 s.
      expect(perKey.Statement.RateBasedStatement).toEqual({
        AggregateKeyType: 'CUSTOM_KEYS',
        CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: perKeyTextTransformations } }],
        Limit: defaultWafRequestsPerKeyPerMinute,
        EvaluationWindowSec: 60,
      });
      expect(perKey.Statement.RateBasedStatement.Limit).toBeGreaterThan(2 * Math.max(...fixedPlans.map(({ limits }) => limits.perMinute)));
      for (const rule of [perIp, perKey]) {
        const response = rule.Action.Block.CustomResponse;
        expect(response.ResponseCode).toBe(429);
        expect(response.ResponseHeaders).toEqual([{ Name: 'Retry-After', Value: '60' }]);
        const body = acl.CustomResponseBodies[response.CustomResponseBodyKey];
        expect(body.ContentType).toBe('APPLICATION_JSON');
        expect(JSON.parse(body.Content)).toMatchObject({ code: 'rate_limited', status: 429 });
      }

      const associations = ofType(c(), 'AWS::WAFv2::WebACLAssociation');
      expect(associations).toHaveLength(1);
      expect(associations[0]![1].Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [acls[0]![0], 'Arn'] });
      const arn = JSON.stringify(associations[0]![1].Properties.ResourceArn);
      expect(arn).toContain(`{"Ref":"${logicalId(c(), c().stack.api)}"}`);
      expect(arn).toContain(`{"Ref":"${ofType(c(), 'AWS::ApiGateway::Stage')[0]![0]}"}`);
      // A request WAF blocked shows in the access log (its gateway response type, WAF_FILTERED), and its blocks on the dashboard.
      const format = JSON.parse(ofType(c(), 'AWS::ApiGateway::Stage')[0]![1].Properties.AccessLogSetting.Format);
      expect(format.errorType).toBe('$context.error.responseType');
      expect(dashboardMetricLines(c()).some((line) => line.includes('"AWS/WAFV2","BlockedRequests"'))).toBe(true);
    });

    test('configured: cdk-nag finds nothing, with no APIG3 acknowledgment anywhere', () => {
      const report = new AwsSolutionsChecks(c().stack).validateScope(c().stack);
      expect(report.violations.map((violation) => `${violation.severity} ${violation.ruleName}`)).toEqual([]);
      expect(acknowledgments(c().stack).filter((ack) => ack.id.startsWith('AwsSolutions-APIG3'))).toEqual([]);
    });
  });

  describe('outputs', () => {
    test(`ApiUrl ends in /${stageName}`, () => {
      const value = b().outputs.ApiUrl?.Value as Json;
      const parts = value['Fn::Join'][1] as unknown[];
      expect(parts[0]).toBe('https://');
      expect(parts.at(-1)).toEqual(expect.stringMatching(new RegExp(`/${stageName}$`)));
      expect(JSON.stringify(parts)).toContain(logicalId(b(), b().stack.api));
    });

    test('names every table, every usage plan and the dashboard', () => {
      for (const name of tableNames) {
        const key = `${name[0]!.toUpperCase()}${name.slice(1)}TableName`;
        expect(b().outputs[key]?.Value).toEqual({ Ref: logicalId(b(), b().stack.tables[name]) });
      }
      for (const { name } of fixedPlans) {
        const key = `${name[0]!.toUpperCase()}${name.slice(1)}UsagePlanId`;
        expect(b().outputs[key]?.Value).toEqual({ Ref: logicalId(b(), b().stack.usagePlans[name]!) });
      }
      b().template.hasOutput('RestApiId', { Value: { Ref: logicalId(b(), b().stack.api) } });
      expect(b().outputs.DashboardName).toBeDefined();
      expect(b().outputs.DashboardUrl).toBeDefined();
    });

    test('names the access log group and every function log group', () => {
      const accessLogGroup = ofType(b(), 'AWS::ApiGateway::Stage')[0]![1].Properties.AccessLogSetting.DestinationArn['Fn::GetAtt'][0];
      expect(b().outputs.AccessLogGroupName?.Value).toEqual({ Ref: accessLogGroup });
      for (const spec of functionSpecs) {
        const fn = b().resources[logicalId(b(), spec.fn(b()))]!;
        expect(b().outputs[`${spec.id[0]!.toUpperCase()}${spec.id.slice(1)}LogGroupName`]?.Value).toEqual(
          fn.Properties.LoggingConfig.LogGroup,
        );
      }
      // The pre-traffic check's findings are where an operator reads why a deployment failed.
      expect(b().outputs.DeploymentCheckLogGroupName?.Value).toEqual(
        b().resources[logicalId(b(), b().stack.deploymentCheck)]!.Properties.LoggingConfig.LogGroup,
      );
    });
  });
});

test('staging rehearses production: both stages have the same kinds and numbers of resources', () => {
  // Logical ids of permissions and deployments embed the stack name; compare types.
  const shape = (b: Built) =>
    Object.values(b.resources)
      .map((resource) => resource.Type as string)
      .sort();
  expect(shape(built.staging)).toEqual(shape(built.production));
});

test("staging's alarms stay off production's pager: each stage's alarms are its own, read only its own stage's metrics and notify only its own topic", () => {
  const alarmsOf = (b: Built) => ofType(b, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties as Json);
  const names = (b: Built) => new Set(alarmsOf(b).map((alarm) => alarm.AlarmName as string));
  for (const name of names(built.staging)) expect(names(built.production).has(name)).toBe(false);
  for (const stage of stageNames) {
    const b = built[stage];
    const topicId = ofType(b, 'AWS::SNS::Topic')[0]![0];
    for (const alarm of alarmsOf(b)) {
      // A Ref resolves inside its own stack only: no stage can name the other's topic.
      for (const action of [...alarm.AlarmActions, ...(alarm.OKActions ?? [])]) expect(action).toEqual({ Ref: topicId });
      for (const metric of alarmMetrics(alarm).filter((m) => m.namespace === businessMetrics.namespace)) {
        expect(metric.dimensions.stage).toBe(stage);
      }
    }
  }
});

test.each(stageNames)('%s dashboard: every graph of our own metrics reads only this stage', (stage) => {
  const lines = dashboardMetricLines(built[stage]);
  const ours = lines.filter((line) => line.includes(`"${businessMetrics.namespace}"`) || line.includes(`{${businessMetrics.namespace},`));
  expect(ours.length).toBeGreaterThan(0);
  for (const line of ours) {
    if (line.includes('SEARCH(')) expect(line).toContain(`stage=\\"${stage}\\"`);
    else expect(line).toContain(`"stage","${stage}"`);
  }
});
