import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { authorizer, routes, stageName } from '../definitions/routes';
import type { TableName } from '../definitions/tables';
import type { Clock } from '../functions/runtime/clock';
import { systemClock } from '../functions/runtime/clock';
import { createDocumentClient, type Dependencies, type DynamoDbCallBudget } from '../functions/runtime/dependencies';
import { type AuthorizerHandler, createLocalGateway, type LocalGatewayOptions, type ProxyHandler } from './gateway';

const projectRoot = join(__dirname, '..');

export interface LocalApiOptions {
  dynamoEndpoint: string;
  tableNames: Record<TableName, string>;
  port?: number;
  host?: string;
  clock?: Clock;
  authorizerCacheTtlSeconds?: number;
  onFunctionResponse?: LocalGatewayOptions['onFunctionResponse'];
  dynamoCallBudget?: DynamoDbCallBudget;
}

export interface LocalApi {
  /** The base URL, ending in /v1. */
  url: string;
  dependencies: Dependencies;
  close(): Promise<void>;
}

/**
 * The whole API on this machine: the very handler modules the CDK stack deploys
 * (found through the route table), behind the local gateway, on DynamoDB Local.
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
  const routeHandlers = await Promise.all(
    routes.map(async (route) => ({ route, handler: (await loadFactory<ProxyHandler>(route.handlerEntry))(dependencies) })),
  );
  const server = createLocalGateway({
    routes: routeHandlers,
    authorizer: (await loadFactory<AuthorizerHandler>(authorizer.handlerEntry))(dependencies),
    clock: dependencies.clock,
    authorizerCacheTtlSeconds: options.authorizerCacheTtlSeconds,
    onFunctionResponse: options.onFunctionResponse,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/${stageName}`,
    dependencies,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        dependencies.db.destroy();
      }),
  };
}

/** DynamoDB Local accepts any credentials; these keep the SDK from looking for real ones. */
export function localCredentials() {
  return { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
}

async function loadFactory<Handler>(entry: string): Promise<(dependencies: Dependencies) => Handler> {
  const module = (await import(join(projectRoot, entry))) as { createHandler?: (dependencies: Dependencies) => Handler };
  if (typeof module.createHandler !== 'function') throw new Error(`${entry} does not export createHandler`);
  return module.createHandler;
}
