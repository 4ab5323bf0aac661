/**
 * The environment of a function as Lambda and the CDK stack give it to ours
 * (lib/constructs/operation-function.ts: NODE_OPTIONS, POWERTOOLS_SERVICE_NAME,
 * the table names), with a region and dummy credentials so that module-level
 * code runs as it does in AWS. Imported first by run.ts, so that every module
 * loaded after it (the local runtime's handlers included) sees it.
 */
import { lambdaNodeMajor } from '../../definitions/lambda-function';
import { businessMetrics } from '../../definitions/metrics';
import { type TableName, tables } from '../../definitions/tables';
import { tableNamesFor } from '../../local/tables';

export const benchTableNames: Record<TableName, string> = tableNamesFor('bench');

export function tableEnvironment(names: Record<TableName, string>): Record<string, string> {
  return Object.fromEntries((Object.keys(tables) as TableName[]).map((name) => [tables[name].envVar, names[name]]));
}

const common = {
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  // No per-request info line: both our logger and the baselines stay quiet unless something goes wrong.
  POWERTOOLS_LOG_LEVEL: 'WARN',
  POWERTOOLS_SERVICE_NAME: 'petstore',
  ...tableEnvironment(benchTableNames),
};

/** A fresh Lambda-like process environment for a cold start of `functionName`. */
export function lambdaProcessEnvironment(functionName: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    ...common,
    AWS_SESSION_TOKEN: 'bench',
    AWS_EXECUTION_ENV: `AWS_Lambda_nodejs${lambdaNodeMajor}.x`,
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    // As the CDK stack sets them on our functions; given to every contender alike.
    NODE_OPTIONS: '--enable-source-maps',
    [businessMetrics.functionEnvVar]: functionName,
  };
}

for (const [name, value] of Object.entries(common)) process.env[name] = value;
delete process.env.AWS_PROFILE;
