import * as path from 'node:path';
import { type CfnElement, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { lambdaBundling, lambdaEnvironment, lambdaMemoryMb } from '../../definitions/lambda-function';
import { businessMetrics } from '../../definitions/metrics';
import { functionLogging } from '../../definitions/observability';
import { functionTimeoutSeconds } from '../../definitions/routes';
import { grantStatements, type TableAccess } from '../../definitions/table-grants';
import { type TableName, tables } from '../../definitions/tables';
import { projectRoot } from '../project-root';

export interface OperationFunctionProps {
  /** The function's short name (an operation's id, `authorizer`): the `function` dimension of its canary metrics. */
  metricsName: string;
  /** Entry file relative to the project root (a route's `handlerEntry`). */
  handlerEntry: string;
  description: string;
  /** The tables of the stack; the function sees and may touch only those named in `access`. */
  tables: Record<TableName, Table>;
  /** Exactly the DynamoDB actions the function may take, per table. */
  access: TableAccess;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  /** The stage (staging, production): the `stage` dimension of its business metrics. */
  stage: string;
  /** Caps (and reserves) the function's concurrent executions; unset, it shares the region's pool. */
  reservedConcurrentExecutions?: number;
  /** Settings of this function alone, beside the environment every function gets. */
  environment?: Record<string, string>;
  /** Seconds; the operations' (definitions/routes.ts) unless set (the deployment check calls several functions in a row). */
  timeoutSeconds?: number;
}

/**
 * The same environment (and bundling) as the local runtime gives the bundles
 * (definitions/lambda-function.ts), the stage and the function's short name
 * (the `stage` and `function` dimensions of its metrics), and its own settings.
 */
function environmentOf(props: OperationFunctionProps): Record<string, string> {
  return {
    ...lambdaEnvironment,
    [businessMetrics.stageEnvVar]: props.stage,
    [businessMetrics.functionEnvVar]: props.metricsName,
    ...props.environment,
  };
}

/**
 * A Lambda function of the API with every default fixed once: Node.js 24 on
 * ARM64, esbuild ESM bundle with the AWS SDK inside, source maps, X-Ray, its own
 * log group, and least-privilege DynamoDB access derived from the route table.
 */
export class OperationFunction extends NodejsFunction {
  /** The `function` dimension of its canary metrics, which the alarms and the dashboard read (businessMetrics.functionEnvVar). */
  readonly metricsName: string;

  constructor(scope: Construct, id: string, props: OperationFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    // Our own role instead of AWSLambdaBasicExecutionRole (logs:* on every log
    // group): the function may write to its own log group and nothing else.
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}`,
    });
    super(scope, id, {
      entry: path.join(projectRoot, props.handlerEntry),
      projectRoot,
      depsLockFilePath: path.join(projectRoot, 'package-lock.json'),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: lambdaMemoryMb,
      timeout: Duration.seconds(props.timeoutSeconds ?? functionTimeoutSeconds),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      tracing: Tracing.ACTIVE,
      role,
      logGroup,
      // Lambda's START and REPORT lines are not written; our lines and the metric lines are (definitions/observability.ts).
      loggingFormat: LoggingFormat[functionLogging.format],
      applicationLogLevelV2: ApplicationLogLevel[functionLogging.applicationLogLevel],
      systemLogLevelV2: SystemLogLevel[functionLogging.systemLogLevel],
      environment: environmentOf(props),
      bundling: {
        ...lambdaBundling,
        format: OutputFormat.ESM,
        mainFields: [...lambdaBundling.mainFields],
        externalModules: [...lambdaBundling.externalModules],
      },
    });

    this.metricsName = props.metricsName;
    logGroup.grantWrite(this);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 24 (nodejs24.x, supported by Lambda to 2028-04-30) is the chosen runtime: the esbuild target and the Node.js pinned for tests and npm start match it; moving to a newer runtime is a deliberate change.',
    });
    this.allowTableActions(props.tables, props.access);
  }

  /**
   * Grants exactly the statements of the access map (definitions/table-grants.ts:
   * Query on the indexes only) and hands the function the names of its tables.
   * Not `grantReadData` and friends: they grant more actions than an operation needs.
   */
  private allowTableActions(stackTables: Record<TableName, Table>, access: TableAccess): void {
    for (const name of Object.keys(access) as TableName[]) {
      if ((access[name] ?? []).length > 0) this.addEnvironment(tables[name].envVar, stackTables[name].tableName);
    }
    for (const statement of grantStatements(access)) {
      const table = stackTables[statement.table];
      if (statement.on === 'table') {
        this.addToRolePolicy(new PolicyStatement({ actions: statement.actions, resources: [table.tableArn] }));
        continue;
      }
      this.addToRolePolicy(new PolicyStatement({ actions: statement.actions, resources: [`${table.tableArn}/index/*`] }));
      const tableId = Stack.of(table).getLogicalId(table.node.defaultChild as CfnElement);
      Validations.of(this.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
        reason: `Query only, on the indexes of the ${statement.table} table (definitions/tables.ts); lists are Queries on those indexes.`,
      });
    }
  }
}
