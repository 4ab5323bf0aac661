import { Aws, CfnOutput, CfnResource, Fn, Stack, type StackProps, Tags, Validations } from 'aws-cdk-lib';
import {
  ApiKey,
  CfnUsagePlanKey,
  DomainName,
  EndpointType,
  Period,
  type RestApi,
  SecurityPolicy,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { deploymentCheckEnvironment, deploymentCheckFunction, deploymentCheckKey } from '../definitions/deployment-check';
import { meteringPoolEnvironment, type PooledPlan, pooledKeyName, pooledMeteringKey } from '../definitions/metering-pool';
import { type PlanName, plans } from '../definitions/plans';
import { authorizer, type OperationId, routes, stageName } from '../definitions/routes';
import { stackOutputNames } from '../definitions/stack-outputs';
import type { TableName } from '../definitions/tables';
import { customersPerPooledKey, pooledUsagePlan } from '../definitions/usage-plan-limits';
import type { ApiFirewall } from './constructs/api-firewall';
import { addApiFrontDoor } from './constructs/api-front-door';
import { CreationChain } from './constructs/creation-chain';
import { FunctionRollout } from './constructs/function-rollout';
import { OperationFunction, type OperationFunctionProps } from './constructs/operation-function';
import { OperationalAlarms } from './constructs/operational-alarms';
import { OperationsDashboard } from './constructs/operations-dashboard';
import { PetStoreTables } from './constructs/pet-store-tables';
import { authorizerReservation, CLOUDFORMATION_RESOURCES_PER_STACK, pooledKeysKept, type StageConfig } from './stage-config';

export interface PetStoreStackProps extends StackProps {
  /** The stage's row of lib/stage-config.ts, with the deployment's context applied (stageConfigFromContext). */
  config: StageConfig;
}

/** The authorizer's name among the rollout's functions (its alarms and deployment group). */
const AUTHORIZER = 'authorizer';

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

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
  /** The `live` aliases API Gateway invokes and the CodeDeploy groups that move them (lib/stage-config.ts: rollout). */
  readonly rollout: FunctionRollout;
  /** CodeDeploy's BeforeAllowTraffic hook: calls every new version before it takes traffic. */
  readonly deploymentCheck: OperationFunction;
  /** Present when the stage config names a custom domain. */
  readonly customDomain?: DomainName;
  /** AWS WAF in front of the stage: the body-size rule always, the per-IP rate rule when the stage config turns it on. */
  readonly firewall: ApiFirewall;
  /**
   * The stack's API keys, and apart from them its usage-plan keys, each
   * created one at a time (CreationChain). AWS Support, quoted in
   * serverless/serverless#12065 (https://github.com/serverless/serverless/issues/12065):
   * a stack creating 18 usage-plan keys at once "consistently failed" with
   * "Unable to complete operation due to concurrent modification" (409), as
   * "CreateUsagePlanKey API call can run only one at a time in an AWS region",
   * and the fix is DependsOn; Terraform's AWS provider serialises the same call
   * (hashicorp/terraform-provider-aws#10092). CreateApiKey is limited to 5
   * requests per second per account, which cannot be raised ("Quotas for
   * configuring and running a REST API in API Gateway", API Gateway management
   * operations, https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
   */
  private readonly apiKeyChain = new CreationChain();
  private readonly usagePlanKeyChain = new CreationChain();

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

    this.tables = new PetStoreTables(this, 'Tables', { dataProtection: config.dataProtection }).tables;
    // With the account's quota declared, a flood of random keys is throttled at the authorizer's
    // own concurrency instead of the region's, which the operations share (authorizerReservation).
    this.authorizerFunction = this.operationFunction(
      AUTHORIZER,
      config,
      authorizer.handlerEntry,
      'Pet Store API key authorizer',
      authorizer.access,
      { reservedConcurrentExecutions: authorizerReservation(config) },
    );
    const operationFunctions: Partial<Record<OperationId, OperationFunction>> = {};
    for (const route of routes) {
      operationFunctions[route.operationId] = this.operationFunction(
        route.operationId,
        config,
        route.handlerEntry,
        `Pet Store ${route.operationId}: ${route.method} ${route.path}`,
        route.access,
      );
    }
    this.operationFunctions = operationFunctions as Record<OperationId, OperationFunction>;

    // API Gateway invokes each function's `live` alias, which deployments move.
    this.rollout = new FunctionRollout(this, 'Rollout', {
      applicationName: `${config.stackName}-functions`,
      rollout: config.rollout,
      alarmNamePrefix: config.stackName,
      stage: config.stage,
    });
    const operationTargets: Record<string, IFunction> = Object.fromEntries(
      routes.map((route) => [route.operationId, this.rollout.liveAlias(this.operationFunctions[route.operationId], 'operation')]),
    );
    const frontDoor = addApiFrontDoor(this, {
      config,
      operationTargets: operationTargets as Record<OperationId, IFunction>,
      authorizerTarget: this.rollout.liveAlias(this.authorizerFunction, 'authorizer'),
    });
    this.api = frontDoor.api;
    this.firewall = frontDoor.firewall;
    // The check's key heads the chains of keys: a pool resize only appends to their ends.
    this.deploymentCheck = this.addDeploymentCheck(config);
    this.usagePlans = this.addUsagePlans(config);
    this.refusePastResourceLimit(config);

    this.alarms = new OperationalAlarms(this, 'Alarms', {
      namePrefix: config.stackName,
      stageLabel: config.stage,
      api: this.api,
      operationFunctions: this.operationFunctions,
      authorizerFunction: this.authorizerFunction,
      tables: this.tables,
      thresholds: config.alarms,
    });
    // The stage-wide alarms notify only: a deployment rolls back on its new version's own alarms (FunctionRollout).
    this.rollout.notify(this.alarms.topic);

    // Dashboard names are unique per account (not per region): the region keeps
    // a second region of the same stage apart.
    const dashboardName = `${config.stackName}-${this.region}`;
    this.dashboard = new OperationsDashboard(this, 'Operations', {
      dashboardName,
      stageLabel: config.stage,
      api: this.api,
      functions: { ...this.operationFunctions, authorizer: this.authorizerFunction },
      tables: this.tables,
      alarms: [...this.alarms.alarms, ...this.rollout.rollbackAlarms],
      accessLogs: frontDoor.accessLogs,
      waf: { webAclName: this.firewall.webAcl.name!, ruleMetricNames: this.firewall.ruleMetricNames },
    }).dashboard;

    this.customDomain = this.addApiUrlOutputs(config);
    this.addOperatorOutputs(config, dashboardName, frontDoor.accessLogs, frontDoor.executionLogs);
  }

  /** The function named `name` (an operation's id, `authorizer`, `deploymentCheck`), construct `<Name>Function`. */
  private operationFunction(
    name: string,
    config: StageConfig,
    handlerEntry: string,
    description: string,
    access: OperationFunctionProps['access'],
    extra: Partial<OperationFunctionProps> = {},
  ): OperationFunction {
    return new OperationFunction(this, `${pascal(name)}Function`, {
      ...extra,
      metricsName: name,
      stage: config.stage,
      tables: this.tables,
      logRetention: config.logRetention,
      logRemovalPolicy: config.dataProtection.removalPolicy,
      handlerEntry,
      description,
      access,
    });
  }

  /**
   * A usage plan per plan with fixed limits, holding that plan's pooled
   * metering keys (functions/domain/metering.ts): every customer key of the
   * plan is metered by one of them, so the number of customers no longer
   * counts against AWS's 10,000 API keys per account and Region, which cannot
   * be raised ("Quotas for configuring and running a REST API in API Gateway",
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
   * A pooled key's usage plan has no throttle and no quota (pooledUsagePlan):
   * it meters only, since anything it limited would be one bucket shared by
   * every customer on the key, which one customer's flood could empty for all
   * of them (SCALING.md, "One customer's flood"). The key values
   * start with the stack id, unique per stage and account; they are usage
   * identifiers, not credentials: with apiKeySourceType AUTHORIZER, API Gateway
   * takes the key only from the authorizer, never from a client's x-api-key
   * ("Choose an API key source", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-key-source.html).
   * Enterprise customers get a usage plan and API key each, from the key tool.
   */
  private addUsagePlans(config: StageConfig): Partial<Record<PlanName, UsagePlan>> {
    const usagePlans: Partial<Record<PooledPlan, UsagePlan>> = {};
    for (const name of Object.keys(plans) as PlanName[]) {
      const { limits, displayName } = plans[name];
      if (limits === 'custom') continue;
      const carried = customersPerPooledKey(config.customers[name as PooledPlan], config.meteringKeysPerPlan);
      usagePlans[name as PooledPlan] = this.api.addUsagePlan(`${pascal(name)}UsagePlan`, {
        name: `petstore-${config.stage}-${name}`,
        description: `${displayName}: ${limits.perMinute} requests per minute, ${limits.perDay} per day per customer (enforced exactly by the API); each pooled key meters up to ${carried} customers, with no throttle or quota that one of them could use up.`,
        throttle: pooledUsagePlan.throttle,
        quota: pooledUsagePlan.quota && { limit: pooledUsagePlan.quota.limit, period: Period.DAY },
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
    }
    // Slot by slot, every plan's key of a slot before the next slot: a resize
    // adds or removes whole slots at the end of the creation chains. During a
    // resize the stack keeps more keys than the authorizer hashes onto (pooledKeysKept).
    for (let slot = 0; slot < pooledKeysKept(config); slot++) {
      for (const [plan, usagePlan] of Object.entries(usagePlans) as [PooledPlan, UsagePlan][]) {
        const key = new ApiKey(this, `${pascal(plan)}MeteringKey${slot}`, {
          apiKeyName: pooledKeyName(config.stage, plan, slot),
          description: `Pooled metering key ${slot} of the ${plans[plan].displayName} plan (usageIdentifierKey of the authorizer); managed by CloudFormation.`,
          value: pooledMeteringKey(this.meteringPoolPrefix, plan, slot),
          enabled: true,
        });
        this.addKeyToPlan(usagePlan, key);
      }
    }
    this.authorizerFunction.addEnvironment(meteringPoolEnvironment.prefix, this.meteringPoolPrefix);
    this.authorizerFunction.addEnvironment(meteringPoolEnvironment.keysPerPlan, String(config.meteringKeysPerPlan));
    return usagePlans;
  }

  /** Puts `key` in `usagePlan`, both at the end of their creation chains. */
  private addKeyToPlan(usagePlan: UsagePlan, key: ApiKey): void {
    usagePlan.addApiKey(key);
    const link = usagePlan.node.children.at(-1);
    if (!(link instanceof CfnUsagePlanKey)) throw new Error(`${usagePlan.node.path}: addApiKey made no usage-plan key`);
    this.apiKeyChain.add(key.node.defaultChild as CfnResource);
    this.usagePlanKeyChain.add(link);
  }

  /**
   * Synth refuses a stack that CloudFormation would refuse: at most
   * CLOUDFORMATION_RESOURCES_PER_STACK resources ("CloudFormation quotas",
   * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html).
   * Counted when the template is written (a validation), CDK's own metadata
   * resource included; each metering key per plan adds an API key and a
   * usage-plan key for every fixed plan (docs/operators.md, "The pool's ceiling").
   */
  private refusePastResourceLimit(config: StageConfig): void {
    this.node.addValidation({
      validate: () => {
        const count = this.node.findAll().filter((c) => CfnResource.isCfnResource(c) && Stack.of(c) === this).length;
        const limit = CLOUDFORMATION_RESOURCES_PER_STACK;
        if (count <= limit) return [];
        const kept = pooledKeysKept(config);
        const perSlot = 2 * Object.values(plans).filter(({ limits }) => limits !== 'custom').length;
        const fits = kept - Math.ceil((count - limit) / perSlot);
        return [
          `${config.stackName}: a metering pool of ${kept} keys per plan makes ${count} resources, past CloudFormation's limit of ${limit} per stack; at most ${fits} keys per plan fit (docs/operators.md, "The pool's ceiling").`,
        ];
      },
    });
  }

  /**
   * The pre-traffic check (functions/deployment-check/) and its key. The key's
   * secret is generated by Secrets Manager at deployment and read only by the
   * check (no person or template ever sees it); the check stores the key's
   * hash as an Enterprise key of its own, whose usageIdentifierKey is this
   * stage's deployment-check API key in a usage plan of its own: it is never
   * metered with a customer's pooled key, and the functions leave it out of
   * the business metrics (definitions/deployment-check.ts). The check invokes
   * the new versions directly (API Gateway reaches only the live alias, which
   * still serves the old version while the hook runs), so nothing it sends
   * passes through the usage plan today; the plan caps the key should it
   * ever be used through the API.
   */
  private addDeploymentCheck(config: StageConfig): OperationFunction {
    const secret = new Secret(this, 'DeploymentCheckSecret', {
      description: `Pet Store ${config.stage}: the secret of the pre-traffic deployment check's API key (the key is psk_ and this value).`,
      generateSecretString: { passwordLength: 43, excludePunctuation: true, includeSpace: false },
      removalPolicy: config.dataProtection.removalPolicy,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        "The deployment check's key is read only by the check function and has an Enterprise limit of its own. Revoking it would not stop its secret: the key tool refuses the check's key but to retire the key of a replaced secret (revoke --retire-check-key), and the next check re-creates the key of the secret it reads. So the secret is rotated by hand, not on a schedule: replace it (put-secret-value), deploy (the check stores the new key), then retire the old key id (docs/operators.md, the check's key).",
    });
    const meteringKey = Fn.join('', [this.meteringPoolPrefix, 'deploymentcheck']);
    const usagePlan = this.api.addUsagePlan('DeploymentCheckUsagePlan', {
      name: `petstore-${config.stage}-deployment-check`,
      description: `The pre-traffic deployment check's own key: ${deploymentCheckKey.limits.perMinute} requests per minute, ${deploymentCheckKey.limits.perDay} per day. Never a customer.`,
      throttle: deploymentCheckKey.usagePlan.throttle,
      quota: { limit: deploymentCheckKey.usagePlan.quota.limit, period: Period.DAY },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
    this.addKeyToPlan(
      usagePlan,
      new ApiKey(this, 'DeploymentCheckMeteringKey', {
        apiKeyName: `petstore-${config.stage}-deployment-check`,
        description: 'Metering key of the pre-traffic deployment check (usageIdentifierKey of its API key); managed by CloudFormation.',
        value: meteringKey,
        enabled: true,
      }),
    );
    const check = this.operationFunction(
      'deploymentCheck',
      config,
      deploymentCheckFunction.handlerEntry,
      'Pet Store pre-traffic deployment check (CodeDeploy BeforeAllowTraffic hook of every function)',
      deploymentCheckFunction.access,
      {
        timeoutSeconds: deploymentCheckFunction.timeoutSeconds,
        environment: {
          [deploymentCheckEnvironment.secretArn]: secret.secretArn,
          [deploymentCheckEnvironment.meteringKey]: meteringKey,
          [deploymentCheckEnvironment.targets]: this.rollout.checkTargets(AUTHORIZER),
        },
      },
    );
    secret.grantRead(check);
    this.rollout.addPreTrafficCheck(check);
    return check;
  }

  /** The stack id's UUID without dashes: unique per stack, so pooled key values never clash across stages. */
  private get meteringPoolPrefix(): string {
    return Fn.join('', Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID))));
  }

  /** ApiUrl (ends in /v1) and, with a custom domain, the domain itself and what DNS must point at. */
  private addApiUrlOutputs(config: StageConfig): DomainName | undefined {
    const executeApiUrl = Fn.join('', ['https://', this.api.restApiId, '.execute-api.', this.region, '.', this.urlSuffix, '/', stageName]);
    if (!config.customDomain) {
      new CfnOutput(this, stackOutputNames.apiUrl, { description: 'Base URL of the API (ends in /v1).', value: executeApiUrl });
      return undefined;
    }
    // Regional, so the certificate lives in the stack's region; the base path
    // `v1` keeps every URL ending in /v1 as on execute-api.
    const domain = new DomainName(this, 'CustomDomain', {
      domainName: config.customDomain.domainName,
      certificate: Certificate.fromCertificateArn(this, 'CustomDomainCertificate', config.customDomain.certificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    domain.addBasePathMapping(this.api, { basePath: stageName, stage: this.api.deploymentStage });
    new CfnOutput(this, stackOutputNames.apiUrl, {
      description: 'Base URL of the API (ends in /v1).',
      value: `https://${config.customDomain.domainName}/${stageName}`,
    });
    new CfnOutput(this, stackOutputNames.customDomainTarget, {
      description: `Point ${config.customDomain.domainName} here: a CNAME, or a Route 53 alias with the hosted zone of ${stackOutputNames.customDomainHostedZoneId}.`,
      value: domain.domainNameAliasDomainName,
    });
    new CfnOutput(this, stackOutputNames.customDomainHostedZoneId, {
      description: `Hosted zone of ${stackOutputNames.customDomainTarget}, for a Route 53 alias record.`,
      value: domain.domainNameAliasHostedZoneId,
    });
    new CfnOutput(this, stackOutputNames.executeApiUrl, {
      description: 'The same API on its execute-api host (before DNS is set up).',
      value: executeApiUrl,
    });
    return domain;
  }

  /** Where an operator looks: alarms, dashboard, logs, tables, usage plans. */
  private addOperatorOutputs(config: StageConfig, dashboardName: string, accessLogs: LogGroup, executionLogs: LogGroup): void {
    new CfnOutput(this, stackOutputNames.restApiId, {
      description: 'For the key tool: Enterprise usage plans attach to this API.',
      value: this.api.restApiId,
    });
    new CfnOutput(this, stackOutputNames.alarmTopicArn, {
      description: 'Subscribe to this topic to receive the alarms.',
      value: this.alarms.topic.topicArn,
    });
    new CfnOutput(this, stackOutputNames.dashboardName, { description: 'The CloudWatch dashboard of this stage.', value: dashboardName });
    new CfnOutput(this, stackOutputNames.dashboardUrl, {
      description: 'The CloudWatch dashboard of this stage, in the AWS console.',
      value: `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${dashboardName}`,
    });
    new CfnOutput(this, stackOutputNames.webAclArn, {
      description: 'The WAF web ACL in front of the stage.',
      value: this.firewall.webAcl.attrArn,
    });
    new CfnOutput(this, stackOutputNames.accessLogGroupName, {
      description: 'API access logs: one JSON line per request.',
      value: accessLogs.logGroupName,
    });
    new CfnOutput(this, stackOutputNames.executionLogGroupName, {
      description: "API Gateway's own error log (authorizer and integration failures).",
      value: executionLogs.logGroupName,
    });
    new CfnOutput(this, stackOutputNames.deploymentApplicationName, {
      description: "CodeDeploy application that moves the functions' live aliases (canary in production).",
      value: this.rollout.application.applicationName,
    });
    const logged = { ...this.operationFunctions, authorizer: this.authorizerFunction, deploymentCheck: this.deploymentCheck };
    for (const [name, fn] of Object.entries(logged)) {
      new CfnOutput(this, stackOutputNames.functionLogGroup(name), {
        description: `Logs of the ${name} function.`,
        value: fn.logGroup.logGroupName,
      });
    }
    for (const name of Object.keys(this.tables) as TableName[]) {
      new CfnOutput(this, stackOutputNames.table(name), { value: this.tables[name].tableName });
    }
    new CfnOutput(this, stackOutputNames.meteringKeysPerPlan, {
      description: 'Pooled API Gateway API keys per fixed plan (the key tool checks it before releasing metering).',
      value: String(config.meteringKeysPerPlan),
    });
    for (const [name, plan] of Object.entries(this.usagePlans) as [PlanName, UsagePlan][]) {
      new CfnOutput(this, stackOutputNames.usagePlan(name), {
        description: `Usage plan of the ${plans[name].displayName} plan.`,
        value: plan.usagePlanId,
      });
    }
  }
}
