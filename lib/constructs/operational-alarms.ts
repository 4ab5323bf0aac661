import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, type IMetric, MathExpression, Metric, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { businessMetrics } from '../../definitions/metrics';
import { planNames } from '../../definitions/plans';
import type { OperationId } from '../../definitions/routes';
import { listSharding, petIndexes, type TableName, tables as tableDefinitions } from '../../definitions/tables';
import { businessMetric, canaryMetric } from '../business-metrics';
import type { AlarmThresholds } from '../stage-config';
import type { OperationFunction } from './operation-function';

export interface OperationalAlarmsProps {
  /** Prefix of every alarm name (the stack name), so a notification says which stage it is about. */
  namePrefix: string;
  stageLabel: string;
  api: RestApi;
  operationFunctions: Record<OperationId, IFunction>;
  authorizerFunction: OperationFunction;
  tables: Record<TableName, ITable>;
  thresholds: AlarmThresholds;
}

export const ALARM_PERIOD = Duration.minutes(5);

/** A metric that may be absent from a period (nothing happened) counts as 0 in math. */
const fill = (id: string) => `FILL(${id}, 0)`;

/** The sum of several metrics as one series an alarm can watch (a SEARCH expression cannot be alarmed on). */
function sumOf(metrics: Record<string, IMetric>, label: string): MathExpression {
  return new MathExpression({ expression: Object.keys(metrics).map(fill).join(' + '), usingMetrics: metrics, label, period: ALARM_PERIOD });
}

/**
 * The alarms an operator is notified of, all publishing to one SNS topic
 * (subscribe to it after deploying). Each description says what the alarm
 * means and what to do; docs/operators.md ("The alarms: what each means and what to do") repeats them.
 */
interface AlarmSpec {
  means: string;
  todo: string;
  metric: IMetric;
  threshold: number;
  periods?: number;
}

export class OperationalAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  /** The stage's 5xx-rate alarm: it notifies; it never rolls a deployment back. */
  readonly serverErrorRate: Alarm;
  /** The stage's p99 latency alarm: it notifies; it never rolls a deployment back. */
  readonly latency: Alarm;
  private readonly props: OperationalAlarmsProps;

  constructor(scope: Construct, id: string, props: OperationalAlarmsProps) {
    super(scope, id);
    this.props = props;
    this.topic = new Topic(this, 'Topic', { displayName: `Pet Store ${props.stageLabel} alarms`, enforceSSL: true });
    this.allowCloudWatchToPublish();
    [this.serverErrorRate, this.latency] = this.apiAlarms();
    this.functionAlarms();
    this.tableAlarms();
    this.productAlarms();
  }

  /**
   * enforceSSL gives the topic a policy holding only a Deny of non-TLS
   * publishing, so CloudWatch needs an explicit Allow, limited to this
   * account's alarms ("Using Amazon SNS for alarm actions" / "Preventing
   * confused deputy", https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
   * and https://docs.aws.amazon.com/sns/latest/dg/sns-access-policy-use-cases.html).
   */
  private allowCloudWatchToPublish(): void {
    const stack = Stack.of(this);
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsOfThisAccount',
        effect: Effect.ALLOW,
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:${this.props.namePrefix}-*`,
          },
        },
      }),
    );
  }

  /** An alarm that notifies the topic when it fires and when it is back to OK. */
  private alarm(alarmId: string, spec: AlarmSpec): Alarm {
    const created = new Alarm(this, alarmId, {
      alarmName: `${this.props.namePrefix}-${alarmId}`,
      alarmDescription: `Means: ${spec.means} Do: ${spec.todo}`,
      metric: spec.metric,
      threshold: spec.threshold,
      evaluationPeriods: spec.periods ?? 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(this.topic);
    created.addAlarmAction(action);
    created.addOkAction(action);
    this.alarms.push(created);
    return created;
  }

  private apiAlarms(): [Alarm, Alarm] {
    const { thresholds: t, api } = this.props;
    const alarm = this.alarm.bind(this);
    const requests = api.metricCount({ period: ALARM_PERIOD, statistic: Stats.SUM });
    const serverErrors = api.metricServerError({ period: ALARM_PERIOD, statistic: Stats.SUM });
    const serverErrorRate = alarm('Api5xxRate', {
      means: `at least ${t.serverErrorRatePercent}% of requests got a 5xx in 5 minutes (with ${t.serverErrorMinRequests} requests or more): functions failing (internal_error), DynamoDB unavailable or throttling (service_unavailable), Lambda unable to run a function or a function crashing (503 service_unavailable from API Gateway), or the authorizer unable to check keys (keys not in its cache answered 503 service_unavailable).`,
      todo: "open the dashboard: function errors and throttles, DynamoDB throttles and the authorizer tell which part fails; read the function logs for the request ids in the access log. This alarm never rolls a deployment back (a canary rolls back on its new version's own alarms), so a fix deploys while it fires; if it started with a deployment, roll back (redeploy the previous commit).",
      metric: new MathExpression({
        expression: `IF(requests >= ${t.serverErrorMinRequests}, 100 * ${fill('errors')} / requests, 0)`,
        usingMetrics: { requests, errors: serverErrors },
        label: '5xx, % of requests',
        period: ALARM_PERIOD,
      }),
      threshold: t.serverErrorRatePercent,
    });
    const latency = alarm('ApiLatencyP99', {
      means: `the slowest 1% of requests took ${t.latencyP99Ms} ms or more, ${t.latencyPeriods} periods of 5 minutes in a row: DynamoDB slow or throttled (functions wait up to their time budget, then answer 503), cold starts after a scale-out, or authorizer cache misses.`,
      todo: 'compare Latency with IntegrationLatency and function Duration on the dashboard: Duration up with DynamoDB throttles means a hot partition (SCALING.md); many cold starts mean consider provisioned concurrency; check the AWS Health Dashboard for DynamoDB or Lambda events.',
      metric: api.metricLatency({ period: ALARM_PERIOD, statistic: Stats.p(99) }),
      threshold: t.latencyP99Ms,
      periods: t.latencyPeriods,
    });
    return [serverErrorRate, latency];
  }

  private functionAlarms(): void {
    const { thresholds: t, ...props } = this.props;
    const alarm = this.alarm.bind(this);
    const throttleTodo =
      'the account or region ran out of Lambda concurrency (1,000 by default, shared with every function and the other stage if in the same account): look at ConcurrentExecutions on the dashboard; if traffic grew, request a higher concurrency quota (Service Quotas); if durations grew, fix the slow dependency first.';
    for (const [operationId, fn] of Object.entries(props.operationFunctions) as [OperationId, IFunction][]) {
      alarm(`${operationId}Errors`, {
        means: `the ${operationId} function crashed or timed out ${t.functionErrors} time(s) or more in 5 minutes. Our handlers answer every expected failure themselves, so this is a bug or a Lambda timeout; clients got 503 service_unavailable from API Gateway.`,
        todo: `search the ${operationId} log group for level ERROR and the failing request ids; if it started with a deployment, roll back (redeploy the previous commit).`,
        metric: fn.metricErrors({ period: ALARM_PERIOD, statistic: Stats.SUM }),
        threshold: t.functionErrors,
      });
      alarm(`${operationId}Throttles`, {
        means: `Lambda refused to run ${operationId} ${t.functionThrottles} time(s) or more in 5 minutes; those requests got 503 service_unavailable with Retry-After from API Gateway.`,
        todo: throttleTodo,
        metric: fn.metricThrottles({ period: ALARM_PERIOD, statistic: Stats.SUM }),
        threshold: t.functionThrottles,
      });
    }
    // Not the authorizer's Lambda Errors: refusing a key means throwing
    // "Unauthorized", which Lambda counts as an error, so every bad key would
    // move it. The authorizer counts KeyStoreFailures only when it could not
    // check a key (test/integration/authorizer-key-store-metric.test.ts).
    alarm('authorizerKeyStoreFailures', {
      means: `the API key authorizer could not read the key store ${t.functionErrors} time(s) or more in 5 minutes: every request whose key was not in the authorizer cache got 503 service_unavailable, valid keys included.`,
      todo: 'search the authorizer log group for level ERROR ("the key store failed"); check that the apiKeys table exists and is not throttled (dashboard); if it started with a deployment, roll back (redeploy the previous commit). Keys cached in the last 300 s keep working meanwhile.',
      // The authorizer across its versions (the per-version series are the rollback alarms').
      metric: canaryMetric(
        this.props.stageLabel,
        businessMetrics.names.keyStoreFailures,
        { function: props.authorizerFunction.metricsName },
        ALARM_PERIOD,
      ),
      threshold: t.functionErrors,
    });
    alarm('authorizerThrottles', {
      means: `Lambda refused to run the authorizer ${t.functionThrottles} time(s) or more in 5 minutes: requests with uncached keys got 503 service_unavailable. A flood of unknown keys (each one misses the cache) reaching the authorizer's reserved concurrency causes this; the operations keep their own concurrency.`,
      todo: `${throttleTodo} If the access log shows many 401s from few addresses, turn on the WAF rate rule (docs/operators.md, "Optional: a custom domain, and WAF").`,
      metric: props.authorizerFunction.metricThrottles({ period: ALARM_PERIOD, statistic: Stats.SUM }),
      threshold: t.functionThrottles,
    });
  }

  private tableAlarms(): void {
    const { thresholds: t, ...props } = this.props;
    const alarm = this.alarm.bind(this);
    for (const [name, table] of Object.entries(props.tables) as [TableName, ITable][]) {
      const indexes = tableDefinitions[name].indexes.map((index) => index.name);
      for (const [kind, metricName] of [
        ['Read', 'ReadThrottleEvents'],
        ['Write', 'WriteThrottleEvents'],
      ] as const) {
        const metrics: Record<string, IMetric> = { table: table.metric(metricName, { period: ALARM_PERIOD, statistic: Stats.SUM }) };
        indexes.forEach((indexName, i) => {
          metrics[`index${i}`] = tableIndexMetric(table, indexName, metricName);
        });
        alarm(`${name}${kind}Throttles`, {
          means: `DynamoDB throttled ${t.dynamoDbThrottles} or more ${kind.toLowerCase()}s of the ${name} table${indexes.length ? ` or its indexes (${indexes.join(', ')})` : ''} in 5 minutes. On demand, that is a hot partition (one key or index partition past about 1,000 writes or 3,000 reads per second), a jump past twice the previous peak, or the table quota. Retries absorb a few; clients see 503 service_unavailable for the rest.`,
          todo: 'find the table and index on the dashboard (DynamoDB row) and read SCALING.md for what binds there: one API key sending much of its minute at once or hammering (rateLimits), creates past a list shard (pets), or a sudden surge (set warm throughput). Consider CloudWatch Contributor Insights on the table to see the hot keys.',
          metric: sumOf(metrics, `${name} ${kind.toLowerCase()} throttles`),
          threshold: t.dynamoDbThrottles,
        });
      }
    }
    // Each list index spreads its writes over listSharding.shardCount keys, one partition each: CloudWatch
    // gives the index's total, so the alarm watches the busiest shard as estimated from it.
    for (const indexName of Object.values(petIndexes)) {
      alarm(`Pets${indexName[0]!.toUpperCase()}${indexName.slice(1)}NearPartitionLimit`, {
        means: `the busiest shard of the ${indexName} index took about ${t.listShardWritesPerSecond} or more writes per second on average over 15 minutes (estimated: the index's writes over its ${listSharding.shardCount} shard keys, times ${listSharding.expectedImbalance} for the busiest). One shard key is one partition, about 1,000 writes per second: creates are nearing a hard wall of the design (SCALING.md).`,
        todo: 'nothing fails yet. Plan more shards per list index (a backfill: new list indexes added and filled before reads switch to them, SCALING.md) now; meanwhile ask heavy creators to spread bulk imports over time.',
        metric: busiestListShardWrites(props.tables.pets, indexName, ALARM_PERIOD),
        threshold: t.listShardWritesPerSecond,
        periods: 3,
      });
    }
  }

  private productAlarms(): void {
    const { thresholds: t } = this.props;
    // One RateLimited series per plan of definitions/plans.ts (the `plan`
    // dimension), summed: alarms cannot watch a SEARCH expression.
    const perPlan = Object.fromEntries(
      planNames.map((plan) => [plan, businessMetric(this.props.stageLabel, businessMetrics.names.rateLimited, { plan })]),
    );
    this.alarm('RateLimitedSpike', {
      means: `our rate limiter answered ${t.rateLimitedPerFiveMinutes} or more 429s (rate_limited, quota_exceeded, key_suspended) in 5 minutes, ${t.rateLimitedPeriods} period(s) in a row: a client looping without honouring Retry-After, or limits refusing more than they should (a plan or deployment change).`,
      todo: 'the dashboard shows 429s by plan and, from the access logs, the keys with the most 429s. One key: contact its owner (the ban rule already suspends it for 15 minutes at a time). Many keys at once after a deployment: roll back. A flood from a few addresses: turn on the WAF rate rule.',
      metric: sumOf(perPlan, '429s from the rate limiter, all plans'),
      threshold: t.rateLimitedPerFiveMinutes,
      periods: t.rateLimitedPeriods,
    });
  }
}

/**
 * The writes per second of the busiest shard key of a write-sharded list index
 * (byListShard, byStatusShard), estimated from the index's total: the average
 * over its shard keys times the imbalance a shard sees (definitions/tables.ts).
 * A status shard takes a subset of its list shard's writes, so the estimate is
 * an upper bound there.
 */
export function busiestListShardWrites(table: ITable, indexName: string, period: Duration, id = 'writes'): MathExpression {
  return new MathExpression({
    expression: `${fill(id)} / PERIOD(${id}) * ${listSharding.expectedImbalance} / ${listSharding.shardCount}`,
    usingMetrics: { [id]: tableIndexMetric(table, indexName, 'ConsumedWriteCapacityUnits').with({ period }) },
    label: `${indexName}: busiest shard's writes per second (estimated)`,
    period,
  });
}

/** A DynamoDB metric of one global secondary index (ITable has no helper for it). */
export function tableIndexMetric(table: ITable, indexName: string, metricName: string): Metric {
  return new Metric({
    namespace: 'AWS/DynamoDB',
    metricName,
    dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
    statistic: Stats.SUM,
    period: ALARM_PERIOD,
  });
}
