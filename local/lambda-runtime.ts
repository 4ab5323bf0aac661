import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { lambdaEnvironment, lambdaMemoryMb, lambdaNodeMajor } from '../definitions/lambda-function';
import { meteringPoolEnvironment } from '../definitions/metering-pool';
import { businessMetrics } from '../definitions/metrics';
import { accessOfFunction, functionTimeoutSeconds } from '../definitions/routes';
import { type TableName, tables } from '../definitions/tables';
import type { MeteringPool } from '../functions/domain/metering';
import type { Clock } from '../functions/runtime/clock';
import { CALL_BUDGET_VARIABLE, type DynamoDbCallBudget } from '../functions/runtime/dependencies';
import type { FunctionBundle } from './function-bundles';

/**
 * Runs each function's built bundle as Lambda does: in a Node.js process of its
 * own (local/lambda-runtime-worker.mjs, plain `node`, nothing of the TypeScript
 * sources or of this process's modules), with the environment the CDK stack sets
 * on that function and the ones Lambda adds, loading `index.handler` from the
 * bundle. Each function is started at once (its cold start) and again on the
 * next invocation if its process died.
 */
export interface LocalFunction {
  name: string;
  /** What the process loaded, as it reported it: the bundle's path and the SHA-256 of the bytes it imported. */
  loaded(): Promise<{ file: string; sha256: string }>;
  /** Lambda gives the function its whole timeout unless the caller (the gateway's context) says less is left. */
  invoke(event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<unknown>;
  /** How many invocations its process answered (result or error). */
  readonly invocations: number;
  /** Replaces the process with a fresh one, as Lambda moves the next invocation to a new execution environment (nothing of the old one's memory carries over). */
  recycle(): Promise<void>;
  stop(): void;
}

export interface LocalFunctionOptions {
  bundle: FunctionBundle;
  tableNames: Record<TableName, string>;
  dynamoEndpoint: string;
  /** A test's clock: each invocation's Date.now() answers it. Unset, the real clock. */
  clock?: Clock;
  /** The functions' POWERTOOLS_LOG_LEVEL; unset, the one this process has, if any. */
  logLevel?: string;
  /**
   * The DynamoDB call budget of the functions (DYNAMODB_CALL_BUDGET, the deployed
   * one, unless set): tests on a loaded machine allow more. functions/runtime/dependencies.ts.
   */
  dynamoCallBudget?: DynamoDbCallBudget;
  /** Pooled metering keys: the stack gives the authorizer its pool by environment (lib/petstore-stack.ts); unset, none. */
  meteringPool?: MeteringPool;
}

const workerFile = join(__dirname, 'lambda-runtime-worker.mjs');

/**
 * The function's environment: the stack's (definitions/lambda-function.ts and
 * the table names, exactly as lib/constructs/operation-function.ts derives them
 * from the route table), Lambda's defined runtime variables ("Defined runtime
 * environment variables", https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
 * and what only this machine needs: DynamoDB's endpoint (the SDK's
 * service-specific endpoint variable), dummy credentials naming the function in
 * the variables where Lambda puts the role's, the log and metric switches a developer or a test
 * set for the functions, and a test's DynamoDB call budget.
 *
 * NODE_OPTIONS is the stack's. For nodejs24.x, Lambda applies no Node.js flag
 * of its own: the flags it adds to switch off experimental features are listed
 * for Node.js 20 and 22 only ("Building Lambda functions with Node.js",
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-nodejs.html). Heap sizes
 * follow the function's memory in Lambda; here they are Node's defaults.
 */
export function functionEnvironment(options: LocalFunctionOptions): NodeJS.ProcessEnv {
  const { bundle } = options;
  const tableVariables = Object.entries(accessOfFunction(bundle.name))
    .filter(([, actions]) => (actions ?? []).length > 0)
    .map(([table]) => [tables[table as TableName].envVar, options.tableNames[table as TableName]]);
  const passedOn = ['POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_DISABLED', 'POWERTOOLS_DEV'].filter(
    (name) => process.env[name] !== undefined,
  );
  return {
    PATH: process.env.PATH,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    _HANDLER: 'index.handler',
    LAMBDA_TASK_ROOT: bundle.taskRoot,
    AWS_EXECUTION_ENV: `AWS_Lambda_nodejs${lambdaNodeMajor}.x`,
    AWS_LAMBDA_FUNCTION_NAME: bundle.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(lambdaMemoryMb),
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    // The function's name as its access key id: DynamoDB Local takes any credentials, and a
    // test's IAM policy simulator (test/support/iam-policy-proxy.ts) tells the functions apart by it, as IAM does by their roles.
    AWS_ACCESS_KEY_ID: bundle.name,
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SESSION_TOKEN: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: options.dynamoEndpoint,
    ...Object.fromEntries(passedOn.map((name) => [name, process.env[name]])),
    ...(options.logLevel ? { POWERTOOLS_LOG_LEVEL: options.logLevel } : {}),
    ...(options.dynamoCallBudget ? { [CALL_BUDGET_VARIABLE]: JSON.stringify(options.dynamoCallBudget) } : {}),
    ...lambdaEnvironment,
    // The stack sets the stage (staging, production); locally there is one. The function's short name as the stack sets it.
    [businessMetrics.stageEnvVar]: 'local',
    [businessMetrics.functionEnvVar]: bundle.name,
    ...Object.fromEntries(tableVariables),
    ...(options.meteringPool && bundle.name === 'authorizer'
      ? {
          [meteringPoolEnvironment.prefix]: options.meteringPool.prefix,
          [meteringPoolEnvironment.keysPerPlan]: String(options.meteringPool.keysPerPlan),
        }
      : {}),
  };
}

type Reply =
  | { type: 'log'; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'ready'; file: string; sha256: string }
  | { type: 'result'; id: number; result: unknown }
  | {
      type: 'error';
      id: number;
      error: { name: string; message: string };
    };

/** Starts the function's process now (its cold start) and answers once it loaded the handler. */
export async function startLocalFunction(options: LocalFunctionOptions): Promise<LocalFunction> {
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let invocations = 0;
  let stopped = false;
  let current: { child: ChildProcess; ready: Promise<{ file: string; sha256: string }> } | undefined;

  function start() {
    // No execArgv: not this process's TypeScript loader or test flags, only what NODE_OPTIONS says.
    const child = fork(workerFile, [], { env: functionEnvironment(options), execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const ready = new Promise<{ file: string; sha256: string }>((resolve, reject) => {
      child.on('message', (reply: Reply) => {
        // The function's log lines, on this process's own output (where a test may read them).
        if (reply.type === 'log') return void process[reply.stream].write(reply.text);
        if (reply.type === 'ready') return resolve({ file: reply.file, sha256: reply.sha256 });
        const waiting = pending.get(reply.id);
        pending.delete(reply.id);
        invocations++;
        if (reply.type === 'result') waiting?.resolve(reply.result);
        else waiting?.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
      });
      child.once('exit', (code, signal) => {
        const error = new Error(`${options.bundle.name}: its process exited (${signal ?? `code ${code}`})`);
        reject(error);
        for (const waiting of pending.values()) waiting.reject(error);
        pending.clear();
        if (current?.child === child) current = undefined;
      });
    });
    ready.catch(() => undefined);
    current = { child, ready };
    return current;
  }

  const first = start();
  await first.ready;

  return {
    name: options.bundle.name,
    get invocations() {
      return invocations;
    },
    loaded: () => (current ?? start()).ready,
    async invoke(event, context) {
      if (stopped) throw new Error(`${options.bundle.name} is stopped`);
      const { child, ready } = current ?? start();
      await ready;
      const id = nextId++;
      const result = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
      child.send(
        {
          type: 'invoke',
          id,
          event,
          remainingMs: context?.getRemainingTimeInMillis() ?? functionTimeoutSeconds * 1000,
          clock: options.clock?.(),
        },
        failOnSendError(pending, id),
      );
      return result;
    },
    async recycle() {
      const old = current?.child;
      // The old process's exit rejects what is still waiting on it: let it go before the new one takes invocations.
      if (old && old.exitCode === null && old.signalCode === null) {
        const exited = new Promise((resolve) => old.once('exit', resolve));
        old.kill('SIGTERM');
        await exited;
      }
      await start().ready;
    },
    stop() {
      stopped = true;
      current?.child.kill('SIGTERM');
    },
  };
}

/**
 * The send callback of invocation `id`: a process that died before its exit was
 * seen (its channel closed) fails the invocation, as a dead execution
 * environment does in Lambda. Without a callback, Node raises an unhandled
 * 'error' event, which would stop the whole local API.
 */
function failOnSendError(pending: Map<number, { reject: (error: Error) => void }>, id: number) {
  return (error: Error | null) => {
    if (!error) return;
    pending.get(id)?.reject(error);
    pending.delete(id);
  };
}
