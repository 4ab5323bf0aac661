import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TableName } from '../../definitions/tables';
import {
  customerUsagePlan,
  pooledUsagePlan,
  sameUsagePlan,
  type UsagePlanSettings,
  widerUsagePlan,
} from '../../definitions/usage-plan-limits';
import { CustomerTable, type MeteredCustomer } from '../../functions/customers';
import { UsageCounters } from '../../functions/rate-limit';
import { createDynamoDbClient, type DynamoDbCallBudget, documentClientOver } from '../../functions/runtime/dependencies';
import { localCredentials } from '../../local/local-api';
import { type LocalEndpoint, localEndpointFile, localTablePrefix, localUsagePlansDir, readLocalEndpoint } from '../../local/local-endpoint';
import { tableNamesFor } from '../../local/tables';
import { LocalUsagePlans } from '../../local/usage-plans';
import { AdminError } from '../errors';
import { type KeyAdminTarget, type Metering, type MeteringChange, noMetering } from './target';

/**
 * `npm start` runs on this machine: one attempt and short timeouts tell at once
 * when it is not there. The key tool retries its writes itself (admin/key-admin.ts).
 */
export const LOCAL_KEY_TOOL_CALL_BUDGET: DynamoDbCallBudget = { maxAttempts: 1, connectionTimeoutMs: 1_000, requestTimeoutMs: 5_000 };

const notRunning =
  'npm start is not running: start it in another terminal (`npm start`), or pass --stage staging|production for a deployed stage.';

/**
 * The keys of a DynamoDB (Local) with these tables: what `npm start` and the
 * tests run on, with the usage plans of its gateway (none: a key table alone).
 * Closing it leaves the client open unless `close` says otherwise.
 */
export function localTarget(
  db: DynamoDBDocumentClient,
  tableNames: Record<TableName, string>,
  options: { name?: string; close?: () => void; usagePlans?: LocalUsagePlans } = {},
): KeyAdminTarget {
  return {
    name: options.name ?? 'local (npm start)',
    keys: new CustomerTable(db, tableNames),
    counters: new UsageCounters(db, tableNames.rateLimits),
    metering: options.usagePlans ? localMetering(options.usagePlans) : noMetering,
    close: options.close ?? (() => {}),
  };
}

/**
 * The DynamoDB of the running `npm start`, found through the file it writes;
 * AWS_ENDPOINT_URL_DYNAMODB (the SDKs' service-specific endpoint variable,
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html,
 * which `npm start` honours too) names it directly when set.
 */
export async function openLocalTarget(options: { endpointFile?: string } = {}): Promise<KeyAdminTarget> {
  const fromEnvironment = process.env.AWS_ENDPOINT_URL_DYNAMODB || undefined;
  const endpoint: LocalEndpoint | undefined = fromEnvironment
    ? { dynamoEndpoint: fromEnvironment, tablePrefix: localTablePrefix }
    : readLocalEndpoint(options.endpointFile ?? localEndpointFile);
  if (!endpoint) throw new AdminError(notRunning);
  const client = createDynamoDbClient({
    endpoint: endpoint.dynamoEndpoint,
    region: 'local',
    ...localCredentials(),
    budget: LOCAL_KEY_TOOL_CALL_BUDGET,
  });
  const tableNames = tableNamesFor(endpoint.tablePrefix);
  // A file left behind by an `npm start` that was killed points at nothing.
  for (const table of Object.values(tableNames)) {
    try {
      await client.send(new DescribeTableCommand({ TableName: table }));
    } catch (error) {
      client.destroy();
      if (error instanceof Error && error.name === 'ResourceNotFoundException') {
        throw new AdminError(`The local table ${table} is missing: restart npm start, which creates it.`);
      }
      throw new AdminError(notRunning);
    }
  }
  const db = documentClientOver(client);
  const usagePlans = new LocalUsagePlans(endpoint.usagePlansDir ?? localUsagePlansDir);
  return localTarget(db, tableNames, { close: () => client.destroy(), usagePlans });
}

/**
 * The metering of the local gateway, as the AWS target's of API Gateway: an
 * Enterprise customer's usage plan of its own (a throttle from its limits:
 * customerUsagePlan), keyed by its metering key, changed in the same order
 * (a raise before the DynamoDB write, a lowering after it: widerUsagePlan).
 * A customer on a fixed plan has none: on AWS the stack's pooled keys meter
 * it, with no throttle. Nothing waits for a cached answer to expire here
 * (every answer names the customer's own metering key), so release has nothing to do.
 */
export function localMetering(usagePlans: LocalUsagePlans): Metering {
  const follow = async (customer: MeteredCustomer, wanted: UsagePlanSettings): Promise<MeteringChange> => {
    const now = usagePlans.of(customer.meteringKey) ?? pooledUsagePlan;
    const meanwhile = widerUsagePlan(now, wanted);
    const set = (settings: UsagePlanSettings) => usagePlans.set(customer.meteringKey, customer.customerId, settings);
    if (!sameUsagePlan(meanwhile, now)) set(meanwhile);
    return {
      undo: async () => set(now),
      finish: async () => {
        if (!sameUsagePlan(wanted, meanwhile)) set(wanted);
      },
    };
  };
  const planOf = (customer: MeteredCustomer) => (customer.plan === 'enterprise' ? customerUsagePlan(customer.limits) : pooledUsagePlan);
  return {
    enrol: (customer) => follow(customer, planOf(customer)),
    changePlan: (_before, after) => follow(after, planOf(after)),
    withdraw: (customer) => follow(customer, pooledUsagePlan),
    release: async () => ({ released: 0, waiting: [] }),
  };
}
