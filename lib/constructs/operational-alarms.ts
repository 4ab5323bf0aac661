import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

export interface OperationalAlarmsProps {
  stage: string;
  api: RestApi;
  /** Functions by a readable name (operationId, "authorizer"). */
  functions: Record<string, IFunction>;
  /** Tables by their name in definitions/tables.ts. */
  tables: Record<string, ITable>;
}

const FIVE_MINUTES = Duration.minutes(5);

/**
 * The alarms an operator is paged for, all publishing to one SNS topic
 * (subscribe to it after deploying): API 5xx and latency, Lambda errors and
 * throttles, DynamoDB throttling (a hot partition shows up here first).
 */
export class OperationalAlarms extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: OperationalAlarmsProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', { displayName: `Pet Store ${props.stage} alarms`, enforceSSL: true });
    const action = new SnsAction(this.topic);

    const alarm = (alarmId: string, description: string, metric: IMetric, threshold: number, evaluationPeriods = 1): void => {
      new Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      })
        .addAlarmAction(action);
    };

    alarm('Api5xx', 'The API answered 5xx (crashed or failing functions, authorizer failures, timeouts).', props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }), 5);
    alarm('ApiLatencyP99', 'p99 latency of the API above 2 s for 15 minutes.', props.api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }), 2000, 3);
    for (const [name, fn] of Object.entries(props.functions)) {
      alarm(`${name}Errors`, `Function ${name} threw or timed out.`, fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }), 1);
      alarm(`${name}Throttles`, `Function ${name} was throttled (account or reserved concurrency exhausted).`, fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }), 1);
    }
    for (const [name, table] of Object.entries(props.tables)) {
      for (const metricName of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
        alarm(`${name}${metricName}`, `Table ${name}: ${metricName} (hot partition or account limit).`, table.metric(metricName, { period: FIVE_MINUTES, statistic: 'Sum' }), 1);
      }
    }
  }
}
