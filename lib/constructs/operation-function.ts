import * as path from 'node:path';
import { type CfnElement, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { businessMetrics } from '../../definitions/metrics';
import { type DynamoDbAction, functionTimeoutSeconds } from '../../definitions/routes';
import { type TableName, tables } from '../../definitions/tables';
import { lambdaBundling } from '../lambda-bundling';
import { projectRoot } from '../project-root';

export type TableAccess = Partial<Record<TableName, readonly DynamoDbAction[]>>;

export interface OperationFunctionProps {
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
}

/**
 * A Lambda function of the API with every default fixed once: Node.js 22 on
 * ARM64, esbuild ESM bundle with the AWS SDK inside, source maps, X-Ray, its own
 * log group, and least-privilege DynamoDB access derived from the route table.
 */
export class OperationFunction extends NodejsFunction {
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
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(functionTimeoutSeconds),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      tracing: Tracing.ACTIVE,
      role,
      logGroup,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        // The `service` dimension of the business metrics and the logs' service field.
        POWERTOOLS_SERVICE_NAME: businessMetrics.serviceName,
        [businessMetrics.stageEnvVar]: props.stage,
      },
      bundling: {
        ...lambdaBundling,
        format: OutputFormat.ESM,
        mainFields: [...lambdaBundling.mainFields],
        externalModules: [...lambdaBundling.externalModules],
      },
    });

    logGroup.grantWrite(this);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the chosen runtime: the esbuild target and the local runtime match it; moving to a newer runtime is a deliberate change.',
    });
    for (const [name, actions] of Object.entries(props.access) as [TableName, readonly DynamoDbAction[]][]) {
      this.allowTableActions(name, props.tables[name], actions);
    }
  }

  /**
   * Grants exactly `actions` on the table and hands the function the table's
   * name; Query only on the table's indexes, since every Query on a request
   * path reads an index (functions/data/). Not `grantReadData` and friends:
   * they grant more actions than an operation needs.
   */
  private allowTableActions(name: TableName, table: Table, actions: readonly DynamoDbAction[]): void {
    if (actions.length === 0) return;
    this.addEnvironment(tables[name].envVar, table.tableName);
    const onTable = actions.filter((action) => action !== 'dynamodb:Query');
    if (onTable.length > 0) this.addToRolePolicy(new PolicyStatement({ actions: [...onTable].sort(), resources: [table.tableArn] }));
    if (actions.includes('dynamodb:Query')) {
      this.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${table.tableArn}/index/*`] }));
      const tableId = Stack.of(table).getLogicalId(table.node.defaultChild as CfnElement);
      Validations.of(this.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
        reason: `Query only, on the indexes of the ${name} table (definitions/tables.ts); lists are Queries on those indexes.`,
      });
    }
  }
}
