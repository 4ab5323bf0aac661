/**
 * CDK assertion tests on both stages, derived from the tables in definitions/
 * and lib/stage-config.ts: what an operator would notice if it were wrong.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { gatewayResponse, gatewayResponses, type GatewayResponseType } from '../../definitions/gateway-responses';
import { plans, type PlanName } from '../../definitions/plans';
import { authorizer, routes, stageName, type DynamoDbAction, type RouteDefinition } from '../../definitions/routes';
import { tables, type TableDefinition, type TableName } from '../../definitions/tables';
import { addPetStoreStacks } from '../../lib/petstore-app';
import type { PetStoreStack } from '../../lib/petstore-stack';
import { projectRoot } from '../../lib/project-root';
import { stageNames, stages, type StageName } from '../../lib/stage-config';
import { usagePlanLimits } from '../../lib/usage-plan-limits';

type Json = Record<string, any>;

interface Built {
  stack: PetStoreStack;
  template: Template;
  resources: Record<string, Json>;
  outputs: Record<string, Json>;
}

// The same feature flags as `cdk synth` (they change the template).
const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;

let outdir: string;
const built = {} as Record<StageName, Built>;

beforeAll(() => {
  // Bundling takes seconds per function: build both stacks once for the file.
  outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-cdk-test-'));
  const app = new App({ outdir, context: cdkContext });
  const stacks = addPetStoreStacks(app);
  for (const stage of stageNames) {
    const template = Template.fromStack(stacks[stage]);
    const json = template.toJSON() as Json;
    built[stage] = { stack: stacks[stage], template, resources: json.Resources, outputs: json.Outputs ?? {} };
  }
}, 120_000);

afterAll(() => {
  if (outdir) fs.rmSync(outdir, { recursive: true, force: true });
});

// ---- helpers over the raw template ------------------------------------------

function ofType(b: Built, type: string): [string, Json][] {
  return Object.entries(b.resources).filter(([, resource]) => resource.Type === type);
}

function logicalId(b: Built, construct: IConstruct): string {
  return b.stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

const tableNames = Object.keys(tables) as TableName[];
const fixedPlans = (Object.keys(plans) as PlanName[]).flatMap((name) => {
  const limits = plans[name].limits;
  return limits === 'custom' ? [] : [{ name, limits }];
});
const functionSpecs: { id: string; access: RouteDefinition['access']; fn: (b: Built) => IConstruct }[] = [
  ...routes.map((route) => ({ id: route.operationId, access: route.access, fn: (b: Built) => b.stack.operationFunctions[route.operationId] })),
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
    for (const action of actions) pairs.push(`${action} on ${tableId}`);
    if (actions.includes('dynamodb:Query')) pairs.push(`dynamodb:Query on ${tableId}/index/*`);
  }
  return pairs.sort();
}

// ---- the tests --------------------------------------------------------------

describe.each(stageNames)('%s stack', (stage) => {
  const config = stages[stage];
  const b = (): Built => built[stage];

  test('cdk-nag AwsSolutions: no finding left unacknowledged', () => {
    const report = new AwsSolutionsChecks(b().stack).validateScope(b().stack);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });

  test('is named after the stage config', () => {
    expect(b().stack.stackName).toBe(config.stackName);
    expect(b().stack.terminationProtection).toBe(stage === 'production');
  });

  describe('API', () => {
    test(`has one stage, "${stageName}", with tracing, metrics and JSON access logs`, () => {
      const stageResources = ofType(b(), 'AWS::ApiGateway::Stage');
      expect(stageResources).toHaveLength(1);
      const props = stageResources[0]![1].Properties;
      expect(props.StageName).toBe(stageName);
      expect(props.TracingEnabled).toBe(true);
      expect(props.MethodSettings).toEqual(expect.arrayContaining([expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', MetricsEnabled: true })]));
      const accessLogGroup = props.AccessLogSetting.DestinationArn['Fn::GetAtt'][0];
      expect(b().resources[accessLogGroup]?.Type).toBe('AWS::Logs::LogGroup');
      const format = JSON.parse(props.AccessLogSetting.Format);
      expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', apiKeyId: '$context.identity.apiKeyId' });
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
      expect(JSON.stringify(props.AuthorizerUri)).toContain(`"${logicalId(b(), b().stack.authorizerFunction)}"`);
    });

    test('has exactly one method per route', () => {
      const methods = ofType(b(), 'AWS::ApiGateway::Method').map(([, m]) => `${m.Properties.HttpMethod} ${resourcePath(b(), m.Properties.ResourceId.Ref)}`);
      expect(methods.sort()).toEqual(routes.map((route) => `${route.method} ${route.path}`).sort());
    });

    test.each(routes.map((route) => [route.operationId, route] as const))('%s: verb, path, authorizer, API key, integration', (_, route) => {
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
      // Wired to this route's function, not another's.
      expect(JSON.stringify(props.Integration.Uri)).toContain(`"${logicalId(b(), b().stack.operationFunctions[route.operationId])}"`);
    });

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
  });

  describe('usage plans', () => {
    test('one per plan with fixed limits, none for custom (Enterprise) plans', () => {
      const names = ofType(b(), 'AWS::ApiGateway::UsagePlan').map(([, p]) => p.Properties.UsagePlanName);
      expect(names.sort()).toEqual(fixedPlans.map(({ name }) => `petstore-${stage}-${name}`).sort());
    });

    test.each(fixedPlans.map((plan) => [plan.name, plan] as const))('%s: throttle and daily quota derive from plans.ts and never undercut the contract', (name, { limits }) => {
      const plan = ofType(b(), 'AWS::ApiGateway::UsagePlan').find(([, p]) => p.Properties.UsagePlanName === `petstore-${stage}-${name}`)!;
      const props = plan[1].Properties;
      const derived = usagePlanLimits(limits);
      expect(props.Throttle).toEqual({ RateLimit: derived.rateLimit, BurstLimit: derived.burstLimit });
      expect(props.Quota).toEqual({ Limit: derived.dailyQuota, Period: 'DAY' });
      // A contract-abiding client may send a minute's worth at the end of one
      // fixed window and another at the start of the next.
      expect(props.Throttle.BurstLimit).toBeGreaterThanOrEqual(2 * limits.perMinute);
      expect(props.Throttle.RateLimit * 60).toBeGreaterThanOrEqual(limits.perMinute);
      expect(props.Quota.Limit).toBeGreaterThanOrEqual(limits.perDay);
      const restApiId = ofType(b(), 'AWS::ApiGateway::RestApi')[0]![0];
      const stageId = ofType(b(), 'AWS::ApiGateway::Stage')[0]![0];
      expect(props.ApiStages).toEqual([expect.objectContaining({ ApiId: { Ref: restApiId }, Stage: { Ref: stageId } })]);
    });
  });

  describe('functions', () => {
    test('one per route plus the authorizer, Node.js 22 on arm64', () => {
      const functions = ofType(b(), 'AWS::Lambda::Function');
      expect(functions).toHaveLength(routes.length + 1);
      for (const [, fn] of functions) {
        expect(fn.Properties).toMatchObject({
          Runtime: 'nodejs22.x',
          Architectures: ['arm64'],
          MemorySize: 512,
          Timeout: 10,
          Handler: 'index.handler',
          TracingConfig: { Mode: 'Active' },
        });
      }
    });

    test.each(functionSpecs.map((spec) => [spec.id, spec] as const))('%s: environment names exactly the tables it may use; own log group', (_, spec) => {
      const fn = b().resources[logicalId(b(), spec.fn(b()))]!;
      const tableVars = Object.fromEntries(
        (Object.keys(spec.access) as TableName[]).map((table) => [tables[table].envVar, { Ref: logicalId(b(), b().stack.tables[table]) }]),
      );
      expect(fn.Properties.Environment.Variables).toEqual({
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'petstore',
        ...tableVars,
      });
      const logGroup = b().resources[fn.Properties.LoggingConfig.LogGroup.Ref]!;
      expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
      expect(logGroup.Properties.RetentionInDays).toBe(config.logRetention);
    });

    test.each(functionSpecs.map((spec) => [spec.id, spec] as const))('%s: IAM allows exactly the DynamoDB actions of its access map', (_, spec) => {
      const fn = b().resources[logicalId(b(), spec.fn(b()))]!;
      const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
      const role = b().resources[roleId]!;
      // No AWS-managed policy (AWSLambdaBasicExecutionRole grants logs on every log group), no inline extras.
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.Policies).toBeUndefined();
      expect(grantedPairs(b(), roleId, (action) => action.startsWith('dynamodb:') || action === '*')).toEqual(expectedPairs(b(), spec.access));
      // Logs only into its own log group.
      const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref as string;
      expect(grantedPairs(b(), roleId, (action) => action.startsWith('logs:'))).toEqual([`logs:CreateLogStream on ${logGroupId}`, `logs:PutLogEvents on ${logGroupId}`]);
    });

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
      const keyAttributes = [definition.partitionKey, definition.sortKey, ...definition.indexes.flatMap((index) => [index.partitionKey, index.sortKey])];
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
      test.each(tableNames)('%s: point-in-time recovery, deletion protection, retained on delete and replace', (name) => {
        const table = b().resources[logicalId(b(), b().stack.tables[name])]!;
        expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
        expect(table.Properties.DeletionProtectionEnabled).toBe(true);
        expect(table.DeletionPolicy).toBe('Retain');
        expect(table.UpdateReplacePolicy).toBe('Retain');
      });
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
      expect(logGroups).toHaveLength(routes.length + 2); // every function + the access logs
      for (const [, logGroup] of logGroups) {
        expect(logGroup.Properties.RetentionInDays).toBe(config.logRetention);
        expect(logGroup.DeletionPolicy).toBe(stage === 'production' ? 'Retain' : 'Delete');
      }
    });
  });

  describe('alarms', () => {
    test('API 5xx and latency, errors and throttles of every function, throttling of every table; all notify the alarm topic', () => {
      const alarms = ofType(b(), 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties as Json);
      const topics = ofType(b(), 'AWS::SNS::Topic');
      expect(topics).toHaveLength(1);
      for (const alarm of alarms) expect(alarm.AlarmActions).toEqual([{ Ref: topics[0]![0] }]);
      const on = (namespace: string, metricName: string, dimensionValue?: string) =>
        alarms.filter(
          (alarm) => alarm.Namespace === namespace && alarm.MetricName === metricName && (!dimensionValue || JSON.stringify(alarm.Dimensions).includes(`"${dimensionValue}"`)),
        );
      expect(on('AWS/ApiGateway', '5XXError')).toHaveLength(1);
      expect(on('AWS/ApiGateway', 'Latency')).toHaveLength(1);
      for (const spec of functionSpecs) {
        const fnId = logicalId(b(), spec.fn(b()));
        expect(on('AWS/Lambda', 'Errors', fnId)).toHaveLength(1);
        expect(on('AWS/Lambda', 'Throttles', fnId)).toHaveLength(1);
      }
      for (const name of tableNames) {
        const tableId = logicalId(b(), b().stack.tables[name]);
        expect(on('AWS/DynamoDB', 'ReadThrottleEvents', tableId)).toHaveLength(1);
        expect(on('AWS/DynamoDB', 'WriteThrottleEvents', tableId)).toHaveLength(1);
      }
      b().template.hasOutput('AlarmTopicArn', { Value: { Ref: topics[0]![0] } });
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

    test('names every table and every usage plan', () => {
      for (const name of tableNames) {
        const key = `${name[0]!.toUpperCase()}${name.slice(1)}TableName`;
        expect(b().outputs[key]?.Value).toEqual({ Ref: logicalId(b(), b().stack.tables[name]) });
      }
      for (const { name } of fixedPlans) {
        const key = `${name[0]!.toUpperCase()}${name.slice(1)}UsagePlanId`;
        expect(b().outputs[key]?.Value).toEqual({ Ref: logicalId(b(), b().stack.usagePlans[name]!) });
      }
      b().template.hasOutput('RestApiId', { Value: { Ref: logicalId(b(), b().stack.api) } });
    });
  });
});

test('staging rehearses production: both stages have the same kinds and numbers of resources', () => {
  // Logical ids of permissions and deployments embed the stack name; compare types.
  const shape = (b: Built) => Object.values(b.resources).map((resource) => resource.Type as string).sort();
  expect(shape(built.staging)).toEqual(shape(built.production));
});
