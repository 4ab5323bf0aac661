import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  type IWidget,
  LogQueryWidget,
  MathExpression,
  Metric,
  SearchExpression,
  Stats,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { businessMetrics } from '../../definitions/metrics';
import { planNames } from '../../definitions/plans';
import { petIndexes, type TableName, tables as tableDefinitions } from '../../definitions/tables';
import { businessMetric, canaryMetric } from '../business-metrics';
import type { FirewallRuleMetricNames } from './api-firewall';
import type { OperationFunction } from './operation-function';
import { busiestListShardWrites, tableIndexMetric } from './operational-alarms';

export interface OperationsDashboardProps {
  dashboardName: string;
  stageLabel: string;
  api: RestApi;
  /** Functions by a readable name (operationId, "authorizer"). */
  functions: Record<string, OperationFunction>;
  tables: Record<TableName, ITable>;
  alarms: Alarm[];
  accessLogs: ILogGroup;
  /** The WAF web ACL's name and its rules' metric names. */
  waf: { webAclName: string; ruleMetricNames: FirewallRuleMetricNames };
}

const PERIOD = Duration.minutes(5);
const WIDE = 24;
const THIRD = 8;
const HEIGHT = 6;

/** Limits of one DynamoDB partition (SCALING.md), drawn on the list shards' graph. */
const PARTITION_WRITES_PER_SECOND = 1_000;
const ACCOUNT_LAMBDA_CONCURRENCY = 1_000;

const graph = (title: string, left: IMetric[], extra: Partial<ConstructorParameters<typeof GraphWidget>[0]> = {}): GraphWidget =>
  new GraphWidget({ title, left, width: THIRD, height: HEIGHT, period: PERIOD, ...extra });

/** A per-second rate from a sum over the period. */
function perSecond(id: string, metric: IMetric, label: string): MathExpression {
  return new MathExpression({ expression: `${id} / PERIOD(${id})`, usingMetrics: { [id]: metric }, label, period: PERIOD });
}

/**
 * One CloudWatch dashboard per stage: alarm states first, then the API, the
 * functions, DynamoDB, and the product's own metrics (Powertools, namespace
 * PetStore), in the order an operator reads them during an incident.
 */
export class OperationsDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    const rows: IWidget[][] = [introduction, alarmStates, versionRow, apiRow, functionRow, capacityRow, dynamoDbRow, productRow].map(
      (row) => row(props),
    );
    rows.push(wafRow(props.waf, Stack.of(this).region));
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
      widgets: rows,
    });
  }
}

/** The title and where to look. */
function introduction(props: OperationsDashboardProps): IWidget[] {
  return [
    new TextWidget({
      markdown: [
        `# Pet Store API, ${props.stageLabel}`,
        'Alarms notify the SNS topic of the stack output `AlarmTopicArn`; each alarm description says what it means and what to do.',
        'Function logs: one log group per function. Access logs (JSON, one line per request, with `principalId` = key id): the access-log group.',
        'Capacity: SCALING.md in the repository explains every limit drawn here.',
      ].join('\n\n'),
      width: WIDE,
      height: 4,
    }),
  ];
}

/** The state of every alarm. */
function alarmStates(props: OperationsDashboardProps): IWidget[] {
  return [new AlarmStatusWidget({ title: 'Alarms', alarms: props.alarms, width: WIDE, height: 4 })];
}

/**
 * What clients got from each version of each function, per minute: during a
 * canary the new version's line sits beside the old one's, which is what the
 * rollback alarms compare (lib/constructs/function-rollout.ts). A SEARCH finds
 * every version without naming it.
 */
function versionRow(props: OperationsDashboardProps): IWidget[] {
  const { namespace, names, canaryDimensions: dims } = businessMetrics;
  const byVersion = (metricName: string, statistic: string) =>
    new SearchExpression({
      expression: `SEARCH('{${namespace},${dims.function},stage,${dims.version}} MetricName="${metricName}" stage="${props.stageLabel}"', '${statistic}', 60)`,
      period: Duration.minutes(1),
    });
  const minuteGraph = (title: string, left: IMetric[]) => graph(title, left, { period: Duration.minutes(1) });
  return [
    minuteGraph('By version: 500s (ServerErrors) and 503s (Unavailable)', [
      byVersion(names.serverErrors, 'Sum'),
      byVersion(names.unavailable, 'Sum'),
    ]),
    minuteGraph('By version: answers and mean latency (ms)', [
      byVersion(names.answerLatency, 'SampleCount'),
      byVersion(names.answerLatency, 'Average'),
    ]),
    minuteGraph('By version: authorizer checks, refused keys, keys not checked', [
      byVersion(names.keyCheckLatency, 'SampleCount'),
      byVersion(names.keysRefused, 'Sum'),
      byVersion(names.keyStoreFailures, 'Sum'),
    ]),
  ];
}

/** Requests, errors and latency of the API. */
function apiRow(props: OperationsDashboardProps): IWidget[] {
  const { api } = props;
  return [
    graph('API requests', [api.metricCount({ statistic: Stats.SUM, label: 'requests' })]),
    graph('API 4xx and 5xx', [
      api.metricClientError({ statistic: Stats.SUM, label: '4xx' }),
      api.metricServerError({ statistic: Stats.SUM, label: '5xx' }),
    ]),
    graph('API latency (ms)', [
      api.metricLatency({ statistic: Stats.p(50), label: 'p50' }),
      api.metricLatency({ statistic: Stats.p(99), label: 'p99' }),
      api.metricIntegrationLatency({ statistic: Stats.p(99), label: 'integration p99' }),
    ]),
  ];
}

/** Errors, throttles and durations of every function. */
function functionRow(props: OperationsDashboardProps): IWidget[] {
  const functions = Object.entries(props.functions);
  return [
    graph("Function errors (the authorizer's include every refused key)", [
      ...functions.map(([name, fn]) => fn.metricErrors({ statistic: Stats.SUM, label: name })),
      ...(props.functions.authorizer
        ? [
            canaryMetric(props.stageLabel, businessMetrics.names.keyStoreFailures, {
              function: props.functions.authorizer.metricsName,
            }).with({ label: 'authorizer: keys not checked (KeyStoreFailures)' }),
          ]
        : []),
    ]),
    graph(
      'Function throttles',
      functions.map(([name, fn]) => fn.metricThrottles({ statistic: Stats.SUM, label: name })),
    ),
    graph(
      'Function duration (ms), p50 and p99',
      functions.flatMap(([name, fn]) => [
        fn.metricDuration({ statistic: Stats.p(50), label: `${name} p50` }),
        fn.metricDuration({ statistic: Stats.p(99), label: `${name} p99` }),
      ]),
    ),
  ];
}

/** Concurrency, DynamoDB throttles and the busiest partitions of the pets list indexes. */
function capacityRow(props: OperationsDashboardProps): IWidget[] {
  const tables = Object.entries(props.tables) as [TableName, ITable][];
  return [
    graph(
      'Concurrent executions (region, all functions)',
      [LambdaFunction.metricAllConcurrentExecutions({ statistic: Stats.MAXIMUM, label: 'max concurrent executions' })],
      { leftAnnotations: [{ value: ACCOUNT_LAMBDA_CONCURRENCY, label: 'default regional quota' }] },
    ),
    graph(
      'DynamoDB throttled requests (tables and indexes)',
      tables.flatMap(([name, table]) => [
        table.metric('ReadThrottleEvents', { statistic: Stats.SUM, label: `${name} reads` }),
        table.metric('WriteThrottleEvents', { statistic: Stats.SUM, label: `${name} writes` }),
        ...tableDefinitions[name].indexes.flatMap((index) => [
          tableIndexMetric(table, index.name, 'ReadThrottleEvents').with({ label: `${name}.${index.name} reads` }),
          tableIndexMetric(table, index.name, 'WriteThrottleEvents').with({ label: `${name}.${index.name} writes` }),
        ]),
      ]),
    ),
    graph(
      'Pets list shards: writes per second, busiest shard (estimated)',
      Object.values(petIndexes).map((indexName, i) => busiestListShardWrites(props.tables.pets, indexName, PERIOD, `w${i}`)),
      { leftAnnotations: [{ value: PARTITION_WRITES_PER_SECOND, label: 'one partition' }] },
    ),
  ];
}

/** DynamoDB capacity, pets created and 4xx by code. */
function dynamoDbRow(props: OperationsDashboardProps): IWidget[] {
  const tables = Object.entries(props.tables) as [TableName, ITable][];
  return [
    graph(
      'DynamoDB consumed capacity per second',
      tables.flatMap(([name, table], i) => [
        perSecond(`r${i}`, table.metricConsumedReadCapacityUnits({ statistic: Stats.SUM }), `${name} RCU/s`),
        perSecond(`w${i}`, table.metricConsumedWriteCapacityUnits({ statistic: Stats.SUM }), `${name} WCU/s`),
      ]),
    ),
    graph('Pets created', [businessMetric(props.stageLabel, businessMetrics.names.petsCreated).with({ label: 'pets created' })]),
    graph('Client errors (4xx) by code', [
      new SearchExpression({
        expression: `SEARCH('{${businessMetrics.namespace},code,service,stage} MetricName="${businessMetrics.names.clientErrors}" service="${businessMetrics.serviceName}" stage="${props.stageLabel}"', 'Sum', ${PERIOD.toSeconds()})`,
        period: PERIOD,
      }),
    ]),
  ];
}

/** 429s by plan and the access-log queries an incident starts with. */
function productRow(props: OperationsDashboardProps): IWidget[] {
  return [
    graph(
      '429s from the rate limiter, by plan',
      planNames.map((plan) => businessMetric(props.stageLabel, businessMetrics.names.rateLimited, { plan }).with({ label: plan })),
      { stacked: true },
    ),
    new LogQueryWidget({
      title: 'Keys with the most 429s (access logs)',
      logGroupNames: [props.accessLogs.logGroupName],
      queryLines: ['filter status = "429"', 'stats count(*) as refused by principalId', 'sort refused desc', 'limit 10'],
      width: THIRD,
      height: HEIGHT,
    }),
    new LogQueryWidget({
      title: 'Latest 5xx (access logs)',
      logGroupNames: [props.accessLogs.logGroupName],
      queryLines: [
        'fields @timestamp, status, httpMethod, resourcePath, errorType, requestId',
        'filter status like /^5/',
        'sort @timestamp desc',
        'limit 20',
      ],
      width: THIRD,
      height: HEIGHT,
    }),
  ];
}

/** WAF: allowed requests and those each rule blocked. */
function wafRow(waf: OperationsDashboardProps['waf'], region: string): IWidget[] {
  const wafMetric = (metricName: string, rule: string, label: string) =>
    new Metric({
      namespace: 'AWS/WAFV2',
      metricName,
      dimensionsMap: { WebACL: waf.webAclName, Rule: rule, Region: region },
      statistic: Stats.SUM,
      period: PERIOD,
      label,
    });
  return [
    graph('WAF', [
      wafMetric('AllowedRequests', 'ALL', 'allowed'),
      wafMetric('BlockedRequests', waf.ruleMetricNames.bodySize, 'bodies over the limit (413)'),
      wafMetric('BlockedRequests', waf.ruleMetricNames.perKeyRate, 'blocked by the per-key rate rule'),
      ...(waf.ruleMetricNames.perIpRate
        ? [wafMetric('BlockedRequests', waf.ruleMetricNames.perIpRate, 'blocked by the per-IP rate rule')]
        : []),
    ]),
  ];
}
