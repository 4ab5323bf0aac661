import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayAuthorizerResult, APIGatewayProxyResult } from 'aws-lambda';
import { routes, stageName } from '../definitions/routes';
import type { TableName } from '../definitions/tables';
import type { MeteringPool } from '../functions/domain/metering';
import type { Clock } from '../functions/runtime/clock';
import { systemClock } from '../functions/runtime/clock';
import { createDocumentClient, type Dependencies, type DynamoDbCallBudget } from '../functions/runtime/dependencies';
import { ensureFunctionBundles } from './function-bundles';
import { createLocalGateway, type LocalGatewayOptions } from './gateway';
import { type LocalFunction, startLocalFunction } from './lambda-runtime';
import { unauthorizedReason } from './refusal-log';
import { LocalUsagePlans, usagePlansOfKeyTool } from './usage-plans';

export interface LocalApiOptions {
  dynamoEndpoint: string;
  tableNames: Record<TableName, string>;
  port?: number;
  host?: string;
  clock?: Clock;
  authorizerCacheTtlSeconds?: number;
  onFunctionResponse?: LocalGatewayOptions['onFunctionResponse'];
  /** The DynamoDB call budget of the functions and of `dependencies.db`; unset, the deployed one. */
  dynamoCallBudget?: DynamoDbCallBudget;
  /** The functions' POWERTOOLS_LOG_LEVEL (e.g. DEBUG for a test that reads their log lines). */
  logLevel?: string;
  /** Pooled metering keys for the authorizer, as the stack gives it; unset, each key's own metering key. */
  meteringPool?: MeteringPool;
  /** The usage plan of each API key, applied by the gateway (LocalGatewayOptions.usagePlanOf); unset, as the stack and the key tool make them. */
  usagePlanOf?: LocalGatewayOptions['usagePlanOf'];
  /** Sees one line per refused request, with why (npm start prints them: local/refusal-log.ts). */
  onRefusal?: LocalGatewayOptions['onRefusal'];
  /** Where the key tool writes the usage plans the gateway applies (local/usage-plans.ts); unset, a folder of its own, removed on close. */
  usagePlansDir?: string;
}

export interface LocalApi {
  /** The base URL, ending in /v1. */
  url: string;
  /** A client of the same tables and the same clock, for setup and checks: the functions have their own. */
  dependencies: Dependencies;
  /** The function processes, by name (operationId, `authorizer`): what each loaded. */
  functions: Record<string, LocalFunction>;
  /** The usage plans the gateway applies, as the key tool sets them (its local target's metering). */
  usagePlans: LocalUsagePlans;
  close(): Promise<void>;
}

/**
 * The whole API on this machine: the bundles the CDK stack deploys, built with
 * its esbuild options (rebuilt first when any input changed: local/function-bundles.ts),
 * each run in a process of its own as Lambda runs it (local/lambda-runtime.ts),
 * behind the local gateway, on DynamoDB Local.
 */
export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const dependencies: Dependencies = {
    db: createDocumentClient({
      endpoint: options.dynamoEndpoint,
      region: 'local',
      budget: options.dynamoCallBudget,
      ...localCredentials(),
    }),
    tableNames: options.tableNames,
    clock: options.clock ?? systemClock,
  };
  const functions = await startFunctions(options);
  const { usagePlans, dispose } = usagePlansIn(options.usagePlansDir);
  const server = localGateway(options, functions, dependencies, usagePlans);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  }).catch((error: unknown) => {
    stopAll(functions);
    dependencies.db.destroy();
    dispose();
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/${stageName}`,
    dependencies,
    functions,
    usagePlans,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        dependencies.db.destroy();
        stopAll(functions);
        dispose();
      }),
  };
}

/** The local gateway in front of the function processes, applying the usage plans the key tool sets unless told others. */
function localGateway(
  options: LocalApiOptions,
  functions: Record<string, LocalFunction>,
  dependencies: Dependencies,
  usagePlans: LocalUsagePlans,
) {
  return createLocalGateway({
    routes: routes.map((route) => ({
      route,
      handler: (event, context) => functions[route.operationId]!.invoke(event, context) as Promise<APIGatewayProxyResult>,
    })),
    authorizer: (event) => functions.authorizer!.invoke(event) as Promise<APIGatewayAuthorizerResult>,
    clock: dependencies.clock,
    authorizerCacheTtlSeconds: options.authorizerCacheTtlSeconds,
    usagePlanOf: options.usagePlanOf ?? usagePlansOfKeyTool(usagePlans),
    onFunctionResponse: options.onFunctionResponse,
    onRefusal: options.onRefusal,
    unauthorizedReason: options.onRefusal && unauthorizedReason(dependencies),
  });
}

/** The usage plans in the folder given, or in a folder of their own that `dispose` removes. */
function usagePlansIn(dir: string | undefined): { usagePlans: LocalUsagePlans; dispose: () => void } {
  if (dir) return { usagePlans: new LocalUsagePlans(dir), dispose: () => {} };
  const own = mkdtempSync(join(tmpdir(), 'petstore-usage-plans-'));
  return { usagePlans: new LocalUsagePlans(own), dispose: () => rmSync(own, { recursive: true, force: true }) };
}

/** Every function's process, started together; none is left running when one fails to start. */
async function startFunctions(options: LocalApiOptions): Promise<Record<string, LocalFunction>> {
  const bundles = Object.values(await ensureFunctionBundles());
  const started = await Promise.allSettled(
    bundles.map((bundle) =>
      startLocalFunction({
        bundle,
        tableNames: options.tableNames,
        dynamoEndpoint: options.dynamoEndpoint,
        clock: options.clock,
        logLevel: options.logLevel,
        dynamoCallBudget: options.dynamoCallBudget,
        meteringPool: options.meteringPool,
      }),
    ),
  );
  const functions = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    stopAll(functions);
    throw failed.reason;
  }
  return Object.fromEntries(functions.map((fn) => [fn.name, fn]));
}

function stopAll(functions: Record<string, LocalFunction> | LocalFunction[]): void {
  for (const fn of Object.values(functions)) fn.stop();
}

/** DynamoDB Local accepts any credentials; these keep the SDK from looking for real ones. */
export function localCredentials() {
  return { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
}
