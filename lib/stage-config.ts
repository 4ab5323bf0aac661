import { type Environment, RemovalPolicy, Token } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { PooledPlan } from '../definitions/metering-pool';
import { plans } from '../definitions/plans';
import { type DeployedStage, stackNames } from '../definitions/stages';
import type { TableName } from '../definitions/tables';
import { usagePlanLimits } from '../definitions/usage-plan-limits';

/**
 * The deployment stages and everything that differs between them. One typed
 * place: the app, the stack and the infrastructure tests all read this table.
 * (The authorizer cache TTL is a property of the API, not of a stage: it lives
 * in definitions/routes.ts.)
 */
export type StageName = DeployedStage;

export interface DataProtection {
  /** What CloudFormation does with tables and log groups when the stack or resource goes away. */
  removalPolicy: RemovalPolicy;
  /**
   * DynamoDB continuous backups (restore to any second of the last 35 days),
   * for the tables worth restoring only (tablesWorthRestoring below).
   */
  pointInTimeRecovery: boolean;
  /** DynamoDB refuses DeleteTable while this is on, whoever asks. */
  deletionProtection: boolean;
}

/**
 * When an alarm fires. Every alarm looks at 5-minute periods; the descriptions
 * in constructs/operational-alarms.ts say what each one means and what to do.
 */
export interface AlarmThresholds {
  /** 5xx answers as a percentage of all requests in 5 minutes. */
  serverErrorRatePercent: number;
  /** …counted only when the 5 minutes had at least this many requests (one failure at night is not a 100 % rate). */
  serverErrorMinRequests: number;
  /** p99 of API Gateway's Latency (whole request, authorizer included), in milliseconds… */
  latencyP99Ms: number;
  /** …over this many consecutive 5-minute periods. */
  latencyPeriods: number;
  /** Lambda Errors (crashes, timeouts: our handlers answer every expected failure) per function per 5 minutes. */
  functionErrors: number;
  /** Lambda Throttles per function per 5 minutes. */
  functionThrottles: number;
  /** DynamoDB throttled requests per table, its indexes included, reads and writes apart, per 5 minutes. */
  dynamoDbThrottles: number;
  /** 429s answered by our rate limiter (the `RateLimited` metric, all plans) per 5 minutes… */
  rateLimitedPerFiveMinutes: number;
  /** …over this many consecutive periods. */
  rateLimitedPeriods: number;
  /**
   * Writes per second on the busiest shard key of a list index (byListShard,
   * byStatusShard; estimated from the index's total), whose partition takes
   * about 1,000 (SCALING.md): the early warning.
   */
  listShardWritesPerSecond: number;
}

/** A custom domain in front of the stage: https://<domainName>/v1. */
export interface CustomDomain {
  domainName: string;
  /** ACM certificate for domainName, in the stack's region (the domain is regional). */
  certificateArn: string;
}

/** AWS WAF's rate rules in front of the stage: one per API key always, one per client IP where the deployment turns it on. */
export interface WafConfig {
  /**
   * Requests per Authorization value (one API key) per minute before WAF answers
   * 429: the edge cap of one customer, above what any fixed plan's contract
   * allows in 60 seconds (defaultWafRequestsPerKeyPerMinute).
   */
  requestsPerKeyPerMinute: number;
  /** Requests per client IP per minute before WAF answers 429 (sliding 60-second window); no per-IP rule unless set. */
  requestsPerIpPerMinute?: number;
}

/** Stage-wide request throttle (all methods together). */
export interface StageThrottle {
  rateLimit: number;
  burstLimit: number;
}

/**
 * The customers a stage is sized for: how many keys of each fixed plan it
 * serves. The stage throttle and the usage plans of the pooled metering keys
 * derive from it (and from the plan table), so that neither refuses what the
 * contract allows these customers. Raise it before the customers come: it is
 * the one number to change as the business grows (docs/operators.md).
 */
export type CustomerMix = Record<PooledPlan, number>;

/**
 * The stage throttle for a customer mix: the sum of every expected customer's
 * own usage-plan throttle (usagePlanLimits in definitions/usage-plan-limits.ts,
 * as if each had a usage plan of its own), which accepts every
 * sequence the contract allows one key, retries included. So the stage never
 * refuses what the contract allows the expected customers even if all of them
 * send their whole allowance at the same moment. What still refuses earlier is
 * AWS's account throttle (and its burst, which AWS sets from the account's
 * rate quota): docs/operators.md lists the quota requests this implies.
 */
export function stageThrottleFor(customers: CustomerMix): StageThrottle {
  let rateLimit = 0;
  let burstLimit = 0;
  for (const [plan, count] of Object.entries(customers) as [PooledPlan, number][]) {
    const limits = plans[plan].limits;
    if (limits === 'custom') throw new Error(`${plan} has no fixed limits`);
    const one = usagePlanLimits(limits);
    rateLimit += count * one.rateLimit;
    burstLimit += count * one.burstLimit;
  }
  return { rateLimit, burstLimit };
}

/**
 * How a deployment moves the functions' `live` aliases, which API Gateway
 * invokes (lib/constructs/function-rollout.ts): `allAtOnce` at once;
 * `canary` as `canary` below says, rolling back if the new version's own
 * alarms fire meanwhile.
 */
export type Rollout = 'allAtOnce' | 'canary';

/**
 * The one setting of canary deployments: CodeDeploy sends `percentage` of the
 * traffic to the new version for `intervalMinutes`, then all of it. The
 * rollback alarms' evaluation (lib/constructs/function-rollout.ts) derives
 * from the same interval, so the two cannot disagree.
 */
export const canary = { percentage: 10, intervalMinutes: 5 } as const;

/**
 * When a new version is worse than the old one (lib/constructs/function-rollout.ts):
 * - `serverErrorsPerMinute`: our own 500s of the new version in a minute (a dependency's failure is a 503, never a 500);
 * - `rateMarginPercent`: its share of 503s, of refused keys, or of keys it could not check, this many points above the old
 *   version's over the comparison's window, and significant (canaryVerdict);
 * - `latencyMarginMs`: its mean latency in a minute this far above the old version's, and significant;
 * - `minCalls`: the comparisons need at least this many calls of the new version in what they judge
 *   (the pre-traffic check alone, no client traffic, is judged by the check).
 * A dependency in trouble moves both versions alike and rolls nothing back.
 */
export const rollbackThresholds = { serverErrorsPerMinute: 1, rateMarginPercent: 20, latencyMarginMs: 1_000, minCalls: 10 } as const;

/**
 * What a rollback alarm looks at: 1-minute periods (Lambda publishes its
 * metrics per minute), as many as fit in the canary's interval less one
 * minute, left for the metric to arrive and the alarm to be evaluated, so a
 * bad version is caught while it takes only the canary's share.
 */
export function rollbackAlarmEvaluation(intervalMinutes: number = canary.intervalMinutes): {
  periodSeconds: number;
  evaluationPeriods: number;
} {
  return { periodSeconds: 60, evaluationPeriods: Math.max(1, intervalMinutes - 1) };
}

/**
 * Lambda keeps at least this much of the account's concurrency unreserved for
 * the functions without a reservation ("Configuring reserved concurrency",
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html):
 * a reservation that would leave less fails the deployment.
 */
export const LAMBDA_UNRESERVED_MINIMUM = 100;

/**
 * Resources CloudFormation accepts in one stack ("CloudFormation quotas",
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html):
 * the synth refuses a stack past it (lib/petstore-stack.ts), which the metering
 * pool is what grows (docs/operators.md, "The pool's ceiling").
 */
export const CLOUDFORMATION_RESOURCES_PER_STACK = 500;

/**
 * The tables whose data is worth restoring, and so get point-in-time recovery
 * where the stage has it: pets (the product) and apiKeys (customers' keys,
 * plans and usage-plan links). rateLimits holds per-day and per-minute
 * counters and idempotency holds replay records, both short-lived and expired
 * by TTL: restoring them would bring back stale counts and replays, so they
 * are not backed up (docs/operators.md, "Data, backups and known limits").
 */
export const tablesWorthRestoring: readonly TableName[] = ['pets', 'apiKeys'];

export interface StageConfig {
  stage: StageName;
  stackName: string;
  description: string;
  dataProtection: DataProtection;
  /** Retention of the Lambda and API access log groups. */
  logRetention: RetentionDays;
  /** CloudFormation refuses `cdk destroy` of the stack while this is on. */
  terminationProtection: boolean;
  alarms: AlarmThresholds;
  /** The customers the stage is sized for (see CustomerMix). */
  customers: CustomerMix;
  /**
   * Pooled API Gateway API keys per fixed plan (functions/domain/metering.ts).
   * Ten per plan: each meters a tenth of its plan (its usage plan limits
   * nothing, definitions/usage-plan-limits.ts, pooledUsagePlan, so no customer
   * can spend it for another), and 3 × 10 keys per stage leave almost all of
   * the account's 10,000 API keys (which cannot be raised) to Enterprise keys.
   */
  meteringKeysPerPlan: number;
  /**
   * Pooled keys per fixed plan the stack keeps in the plan's usage plan, when
   * more than meteringKeysPerPlan: only between the two deployments of a pool
   * resize (docs/operators.md, "Resizing the metering pool"). The authorizer's
   * answers are cached for up to its TTL and API Gateway refuses (401) a
   * usageIdentifierKey that is no API key of a usage plan, so a deployment may
   * neither delete a pooled key the authorizer named before it nor switch the
   * authorizer to a pooled key it creates: growing, the first deployment keeps
   * (creates) the new keys and the second switches the authorizer; shrinking,
   * the first switches the authorizer and keeps the old keys, the second, once
   * the cache has let the old answers go, deletes them.
   */
  meteringKeysKeptPerPlan?: number;
  /** Throttle of the whole stage: stageThrottleFor(customers), never set by hand. */
  throttle: StageThrottle;
  /**
   * The most concurrent executions the authorizer may take (Lambda reserved
   * concurrency): a flood of random keys (each misses the authorizer cache)
   * is throttled there (503 for uncached keys) instead of using up the
   * region's concurrency that the operations share. SCALING.md: 20 ms per
   * call, so N executions serve about N × 50 uncached requests per second.
   * The account's Lambda concurrency quota must be at least this plus
   * LAMBDA_UNRESERVED_MINIMUM (plus the other stage's reservation when both
   * share the account), so it is reserved only where the operator declares
   * the quota (`-c <stage>LambdaConcurrencyQuota=…`, checked at synth:
   * stageConfigFromContext, authorizerReservation).
   */
  authorizerReservedConcurrency: number;
  /**
   * The account's Lambda concurrency quota as the operator declared it by
   * context; unset, nothing is reserved (authorizerReservation).
   */
  lambdaConcurrencyQuota?: number;
  rollout: Rollout;
  /** Off unless set (here or by context: see stageConfigFromContext). */
  customDomain?: CustomDomain;
  /** The web ACL's rate rules (the ACL itself, with its body-size rule, is on every stage). */
  waf: WafConfig;
}

/**
 * The smallest per-IP WAF limit that never refuses a request the contract
 * allows one key: fixed UTC minutes let a client send a minute's worth at the
 * end of one minute and another at the start of the next, 2 × perMinute within
 * 60 seconds. (Several keys behind one address, or Enterprise keys with higher
 * limits, need a higher WAF limit: the operator's call.)
 */
export const minimumWafRequestsPerIpPerMinute = Math.max(
  ...Object.values(plans).map(({ limits }) => (limits === 'custom' ? 0 : 2 * limits.perMinute)),
);

/**
 * The per-key WAF limit unless the context sets one (`-c <stage>WafKeyRateLimit=…`):
 * twice the most one key's contract allows in 60 seconds, because WAF's count
 * is an estimate "near the limit that you set" ("Rate-based rule caveats in AWS
 * WAF", https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-caveats.html).
 * An Enterprise contract above half of it needs a higher limit (docs/operators.md).
 */
export const defaultWafRequestsPerKeyPerMinute = 2 * minimumWafRequestsPerIpPerMinute;

const stagingCustomers: CustomerMix = { free: 50, pro: 20, business: 20 };
const productionCustomers: CustomerMix = { free: 500, pro: 100, business: 60 };

export const stages: Record<StageName, StageConfig> = {
  staging: {
    stage: 'staging',
    stackName: stackNames.staging,
    description: 'Pet Store API v1, staging: disposable, its data can be destroyed.',
    dataProtection: { removalPolicy: RemovalPolicy.DESTROY, pointInTimeRecovery: false, deletionProtection: false },
    logRetention: RetentionDays.TWO_WEEKS,
    terminationProtection: false,
    alarms: {
      serverErrorRatePercent: 5,
      serverErrorMinRequests: 20,
      // Little traffic: p99 is mostly cold starts.
      latencyP99Ms: 5_000,
      latencyPeriods: 3,
      functionErrors: 1,
      functionThrottles: 1,
      dynamoDbThrottles: 1,
      // Rate-limit tests against staging make 429s on purpose.
      rateLimitedPerFiveMinutes: 5_000,
      rateLimitedPeriods: 1,
      listShardWritesPerSecond: 700,
    },
    // The test keys of staging: enough for a load test, and a stage throttle
    // (980 requests per second) that leaves the account's API Gateway
    // throughput to a production stage in the same account and region.
    customers: stagingCustomers,
    meteringKeysPerPlan: 10,
    waf: { requestsPerKeyPerMinute: defaultWafRequestsPerKeyPerMinute },
    throttle: stageThrottleFor(stagingCustomers),
    // 980 uncached requests per second at 20 ms each need 20.
    authorizerReservedConcurrency: 20,
    rollout: 'allAtOnce',
  },
  production: {
    stage: 'production',
    stackName: stackNames.production,
    description: 'Pet Store API v1, production.',
    dataProtection: { removalPolicy: RemovalPolicy.RETAIN, pointInTimeRecovery: true, deletionProtection: true },
    logRetention: RetentionDays.ONE_YEAR,
    terminationProtection: true,
    alarms: {
      serverErrorRatePercent: 1,
      serverErrorMinRequests: 50,
      latencyP99Ms: 2_000,
      latencyPeriods: 3,
      functionErrors: 1,
      functionThrottles: 1,
      dynamoDbThrottles: 1,
      rateLimitedPerFiveMinutes: 1_000,
      rateLimitedPeriods: 2,
      listShardWritesPerSecond: 700,
    },
    // SCALING.md: today's peak is 60 Business keys at full rate (1,000 requests
    // per second); Free and Pro add the rest. Stage throttle: 4,040 requests
    // per second, burst 240,000 (every customer's whole allowance at once, as far
    // as the account's own burst of 5,000 lets it: SCALING.md, API Gateway).
    // Past it, API Gateway answers 429 (THROTTLED) before any of our code runs.
    customers: productionCustomers,
    meteringKeysPerPlan: 10,
    waf: { requestsPerKeyPerMinute: defaultWafRequestsPerKeyPerMinute },
    throttle: stageThrottleFor(productionCustomers),
    // 4,040 uncached requests per second (the stage throttle, all with random
    // keys) at 20 ms each need 81; 100 leaves room for slower key-store reads.
    authorizerReservedConcurrency: 100,
    rollout: 'canary',
  },
};

export const stageNames = Object.keys(stages) as StageName[];

type ContextReader = (key: string) => unknown;

function contextString(context: ContextReader, key: string): string | undefined {
  const value = context(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') throw new Error(`Context ${key} must be a string.`);
  return value;
}

/**
 * Where a stage deploys: `-c stagingAccount=… -c stagingRegion=…` (or
 * productionAccount / productionRegion), else the CLI's current credentials
 * (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION). Never a lookup, so synth works
 * offline; with neither set the stack is environment-agnostic.
 */
export function stageEnvironment(stage: StageName, context: ContextReader, env: NodeJS.ProcessEnv = process.env): Environment {
  return {
    account: contextString(context, `${stage}Account`) ?? env.CDK_DEFAULT_ACCOUNT,
    region: contextString(context, `${stage}Region`) ?? env.CDK_DEFAULT_REGION,
  };
}

const HOSTNAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;
const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/;

/**
 * A stage's configuration with the deployment's own choices from the CDK
 * context, all optional and off by default (so `cdk synth` needs none):
 *
 * - `-c <stage>DomainName=api.example.com -c <stage>CertificateArn=arn:aws:acm:…`:
 *   a regional custom domain with the base path `v1` (the certificate must be
 *   in the stack's region); the ApiUrl output then uses it.
 * - `-c <stage>WafRateLimit=<requests per client IP per minute>`: a per-IP
 *   rate-based rule in the stage's web ACL; `-c <stage>WafKeyRateLimit=…`
 *   replaces the per-key rule's limit (defaultWafRequestsPerKeyPerMinute).
 *
 * The same keys may sit in cdk.json's context. Values are checked here, at
 * synth, so a typo fails before any deployment starts.
 */
export function stageConfigFromContext(stage: StageName, context: ContextReader, region?: string): StageConfig {
  const base = stages[stage];
  const config: StageConfig = { ...base };
  pooledKeysKept(config);

  const domainName = contextString(context, `${stage}DomainName`);
  const certificateArn = contextString(context, `${stage}CertificateArn`);
  if (domainName !== undefined || certificateArn !== undefined) {
    if (domainName === undefined || certificateArn === undefined) {
      throw new Error(`A custom domain needs both ${stage}DomainName and ${stage}CertificateArn.`);
    }
    config.customDomain = { domainName, certificateArn };
  }
  if (config.customDomain) validateCustomDomain(stage, config.customDomain, region);

  config.waf = wafFromContext(context, stage, config.waf);
  validateWaf(stage, config.waf);

  const concurrencyQuota = wholeNumber(context, stage, 'LambdaConcurrencyQuota');
  if (concurrencyQuota !== undefined) {
    validateConcurrencyQuota(stage, config, concurrencyQuota);
    config.lambdaConcurrencyQuota = concurrencyQuota;
  }
  const rpsQuota = wholeNumber(context, stage, 'ApiGatewayRpsQuota');
  if (rpsQuota !== undefined && config.throttle.rateLimit > rpsQuota) {
    throw new Error(
      `${stage}: the stage throttle (${config.throttle.rateLimit} requests per second, derived from its customer mix) is above the account's API Gateway throttle quota of ${rpsQuota} (${stage}ApiGatewayRpsQuota): AWS would refuse contract-allowed requests first. Request a higher quota (docs/operators.md, "Quotas to request before launch") and pass the new value.`,
    );
  }
  return config;
}

/** The pooled keys per fixed plan the stack creates: meteringKeysPerPlan, or meteringKeysKeptPerPlan during a resize. */
export function pooledKeysKept(config: Pick<StageConfig, 'stage' | 'meteringKeysPerPlan' | 'meteringKeysKeptPerPlan'>): number {
  const kept = config.meteringKeysKeptPerPlan ?? config.meteringKeysPerPlan;
  if (!Number.isSafeInteger(kept) || kept < config.meteringKeysPerPlan) {
    throw new Error(
      `${config.stage}: meteringKeysKeptPerPlan (${kept}) must be a whole number of at least meteringKeysPerPlan (${config.meteringKeysPerPlan}): the authorizer names every one of those (docs/operators.md, "Resizing the metering pool").`,
    );
  }
  return kept;
}

function wholeNumber(context: ContextReader, stage: StageName, name: string): number | undefined {
  const value = contextString(context, `${stage}${name}`);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`${stage}${name} must be a whole number.`);
  return Number(value);
}

/**
 * The account's Lambda concurrency quota (Service Quotas, "Concurrent
 * executions") must cover the authorizer's reservation and still leave
 * LAMBDA_UNRESERVED_MINIMUM unreserved, or CloudFormation fails the deployment.
 */
function validateConcurrencyQuota(stage: StageName, config: StageConfig, quota: number): void {
  const needed = config.authorizerReservedConcurrency + LAMBDA_UNRESERVED_MINIMUM;
  if (quota < needed) {
    throw new Error(
      `${stage}: the authorizer reserves ${config.authorizerReservedConcurrency} concurrent executions and Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} unreserved, so the account's Lambda concurrency quota must be at least ${needed} (more if the other stage shares the account); ${stage}LambdaConcurrencyQuota says ${quota}. Request an increase (docs/operators.md, "When to reserve concurrency").`,
    );
  }
}

/**
 * The authorizer's reserved concurrency, only where the operator has declared
 * the account's Lambda concurrency quota (and synth has checked it covers the
 * reservation). Without it nothing is reserved: "New AWS accounts have reduced
 * concurrency and memory quotas" ("Lambda quotas",
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), and a
 * reservation that leaves less than LAMBDA_UNRESERVED_MINIMUM unreserved fails
 * the first deployment (docs/operators.md, "When to reserve concurrency").
 */
export function authorizerReservation(
  config: Pick<StageConfig, 'authorizerReservedConcurrency' | 'lambdaConcurrencyQuota'>,
): number | undefined {
  return config.lambdaConcurrencyQuota === undefined ? undefined : config.authorizerReservedConcurrency;
}

/** The concurrency quota an account needs for these stages together (they may share it). */
export function requiredLambdaConcurrencyQuota(stageList: readonly StageConfig[]): number {
  return stageList.reduce((sum, config) => sum + config.authorizerReservedConcurrency, LAMBDA_UNRESERVED_MINIMUM);
}

function validateCustomDomain(stage: StageName, domain: CustomDomain, region: string | undefined): void {
  if (!HOSTNAME.test(domain.domainName)) {
    throw new Error(`${stage}DomainName "${domain.domainName}" is not a lower-case host name such as api.example.com.`);
  }
  const match = ACM_CERTIFICATE_ARN.exec(domain.certificateArn);
  if (!match) throw new Error(`${stage}CertificateArn "${domain.certificateArn}" is not an ACM certificate ARN.`);
  const certificateRegion = match[1];
  if (region !== undefined && !Token.isUnresolved(region) && certificateRegion !== region) {
    throw new Error(
      `${stage}CertificateArn is in ${certificateRegion}, but the stage deploys to ${region}: a regional custom domain needs a certificate of its own region.`,
    );
  }
}

/** `-c <stage>WafKeyRateLimit=…` replaces the per-key limit; `-c <stage>WafRateLimit=…` adds the per-IP rule. */
function wafFromContext(context: ContextReader, stage: StageName, base: WafConfig): WafConfig {
  const perKey = wholeNumber(context, stage, 'WafKeyRateLimit') ?? base.requestsPerKeyPerMinute;
  const perIp = contextString(context, `${stage}WafRateLimit`);
  if (perIp === undefined) return { ...base, requestsPerKeyPerMinute: perKey };
  if (!/^\d+$/.test(perIp)) throw new Error(`${stage}WafRateLimit must be a whole number of requests per client IP per minute.`);
  return { requestsPerKeyPerMinute: perKey, requestsPerIpPerMinute: Number(perIp) };
}

function validateWaf(stage: StageName, waf: WafConfig): void {
  const limits: [string, number][] = [['WafKeyRateLimit', waf.requestsPerKeyPerMinute]];
  if (waf.requestsPerIpPerMinute !== undefined) limits.push(['WafRateLimit', waf.requestsPerIpPerMinute]);
  for (const [name, limit] of limits) {
    if (!Number.isSafeInteger(limit) || limit < minimumWafRequestsPerIpPerMinute || limit > 2_000_000_000) {
      throw new Error(
        `${stage}${name} must be from ${minimumWafRequestsPerIpPerMinute} (twice the largest fixed per-minute plan limit, so that WAF never refuses what the contract allows) to 2000000000; got ${limit}.`,
      );
    }
  }
}
