import type { TableName } from '../../../definitions/tables';
import { tables } from '../../../definitions/tables';
import { CounterTable, RateLimiter, type Verdict } from '../../../functions/rate-limit';
import { assumptions, rps } from '../../../scripts/capacity-model';
import { seededRandom } from '../customer-simulation';
import { SimulatedDynamoDB } from '../simulated-dynamodb';
import { ExplicitPool, type Instance, type Routing, SampledPool, scaleOutSeconds, warmPoolSize } from './lambda-pool';
import { type ConsumedCapacity, MeteredTable } from './metered-table';
import { type AuditFigures, ScaleAudit } from './scale-audit';
import { type Arrival, arrivals, isHot, type Operation, operationShares, scaleCustomers } from './workload';

/**
 * The limiter at scale (issue 49), in virtual time: the real limiter
 * (functions/rate-limit/, one RateLimiter per function environment) over
 * the in-memory DynamoDB, metered and throttled per partition
 * (metered-table.ts), for the customers of workload.ts on environments kept as
 * Lambda keeps them (lambda-pool.ts). At 1× every request is simulated; at m×
 * one 1× population of customers (a sample of 1 in m) over the environments
 * the whole m× load keeps warm, so a customer's requests fan out as they would.
 * Per-request figures are the sample's: every customer of an m× population is
 * one of the 1× population's kind.
 */
export interface ScaleOptions {
  factor: number;
  routing: Routing;
  seed: number;
  /** Virtual seconds before the figures start: the environments learn the customers' paces. */
  warmupSeconds: number;
  /** Virtual seconds measured. */
  measuredSeconds: number;
  /** At 1× too, the sampled pool of m× (to check it against every request simulated). */
  sampledPool?: boolean;
  /** `under 1 KB`: the counter item charged as if it kept a constant size under 1 KB (the model change SCALING.md describes). */
  counterItem?: CounterItemCharge;
}

export type CounterItemCharge = 'as built' | 'under 1 KB';

export interface ScaleFigures extends AuditFigures {
  factor: number;
  routing: Routing;
  counterItem: CounterItemCharge;
  seed: number;
  /** The limiter's DynamoDB units per request (rateLimits table), measured by item size. */
  writeUnitsPerRequest: number;
  readUnitsPerRequest: number;
  /** Writes per request (leases, refusals, bans): at one a request, no environment saw its customer's spare. */
  writesPerRequest: number;
  /** Counter calls DynamoDB refused for their partition's throughput. */
  throttledCalls: number;
  /** The largest counter item of the run. */
  largestItemBytes: number;
  /** Warm environments per function (at 1×: the most the run had). */
  environments: Record<Operation, number>;
  /** Seconds a cold function takes to scale out to that many (listPets, the largest). */
  scaleOutSeconds: number;
  hotCustomers: number;
  customers: number;
}

/** The virtual clock's start: a Monday 10:00 UTC, far from midnight. */
const START_MS = Date.parse('2099-06-15T10:00:00Z');
const tableNames: Record<TableName, string> = { pets: 'pets', apiKeys: 'keys', rateLimits: 'counters', idempotency: 'idempotency' };
const operations: Operation[] = ['createPet', 'listPets', 'getPet'];

interface Router {
  route(arrival: Arrival): Instance | undefined;
  environments(): Record<Operation, number>;
}

export async function runScale(options: ScaleOptions): Promise<ScaleFigures> {
  // Two streams of the seed: the customers are the same whatever the factor and routing draw afterwards.
  const customers = scaleCustomers(seededRandom(options.seed));
  const random = seededRandom(options.seed ^ 0x5eed);
  const clock = { nowMs: START_MS };
  const store = new SimulatedDynamoDB(tableNames);
  const counterItem = options.counterItem ?? 'as built';
  const chargedBytesAtMost = counterItem === 'under 1 KB' ? 1_000 : Number.POSITIVE_INFINITY;
  const counters = new MeteredTable(
    store,
    tableNames.rateLimits,
    tables.rateLimits.partitionKey.name,
    () => clock.nowMs,
    chargedBytesAtMost,
  );
  const newLimiter = () => new RateLimiter(new CounterTable(counters.client(), tableNames.rateLimits));
  const router = routerFor(options, random, newLimiter);
  const audit = new ScaleAudit();
  const measuredFromMs = START_MS + options.warmupSeconds * 1000;
  let atWarmupEnd = { ...counters.consumed };
  for (const arrival of arrivals(customers, random, START_MS, measuredFromMs + options.measuredSeconds * 1000)) {
    if (clock.nowMs < measuredFromMs && arrival.atMs >= measuredFromMs) atWarmupEnd = { ...counters.consumed };
    clock.nowMs = arrival.atMs;
    const admission = await admit(router, arrival);
    audit.answer(arrival.customer, arrival.atMs, admission, arrival.atMs >= measuredFromMs);
  }
  const environments = router.environments();
  return {
    ...measured(audit.result(), counters.consumed, atWarmupEnd),
    factor: options.factor,
    routing: options.routing,
    counterItem,
    seed: options.seed,
    environments,
    scaleOutSeconds: scaleOutSeconds(environments.listPets),
    hotCustomers: customers.filter(isHot).length,
    customers: customers.length,
  };
}

/** What the clients saw, and the limiter's units per request since the warm-up's end. */
function measured(figures: AuditFigures, consumed: ConsumedCapacity, atWarmupEnd: ConsumedCapacity) {
  return {
    ...figures,
    writeUnitsPerRequest: (consumed.writeUnits - atWarmupEnd.writeUnits) / figures.requests,
    readUnitsPerRequest: (consumed.readUnits - atWarmupEnd.readUnits) / figures.requests,
    writesPerRequest: (consumed.writeCalls - atWarmupEnd.writeCalls) / figures.requests,
    throttledCalls: consumed.throttledCalls - atWarmupEnd.throttledCalls,
    largestItemBytes: consumed.largestItemBytes,
  };
}

/** One request through its environment's limiter: its admission, or 'error' for a 5xx. */
async function admit(router: Router, arrival: Arrival): Promise<Verdict | 'error'> {
  const instance = router.route(arrival);
  if (!instance) return 'error';
  const { customer } = arrival;
  try {
    return await instance.limiter.admit({ keyId: customer.keyId, customerId: customer.customerId, limits: customer.limits }, arrival.atMs);
  } catch {
    // The limiter's call failed (a throttle): the request is answered 503.
    return 'error';
  }
}

function routerFor(options: ScaleOptions, random: () => number, newLimiter: () => RateLimiter): Router {
  const poolOptions = { routing: options.routing, random, newLimiter };
  if (options.factor === 1 && !options.sampledPool) {
    const pools = Object.fromEntries(operations.map((operation) => [operation, new ExplicitPool(poolOptions)])) as Record<
      Operation,
      ExplicitPool
    >;
    const most = Object.fromEntries(operations.map((operation) => [operation, 0])) as Record<Operation, number>;
    return {
      route: (arrival) => {
        const pool = pools[arrival.operation];
        const instance = pool.route(arrival.atMs, arrival.durationMs);
        most[arrival.operation] = Math.max(most[arrival.operation], pool.instances.length);
        return instance;
      },
      environments: () => most,
    };
  }
  const pools = Object.fromEntries(
    operations.map((operation) => {
      const durationMs = assumptions.durationsMs[operation];
      const concurrency = (rps(options.factor) * operationShares[operation] * durationMs) / 1000;
      return [operation, new SampledPool(warmPoolSize(concurrency, durationMs, options.routing), poolOptions, START_MS)];
    }),
  ) as Record<Operation, SampledPool>;
  return {
    route: (arrival) => pools[arrival.operation].route(arrival.atMs),
    environments: () => Object.fromEntries(operations.map((operation) => [operation, pools[operation].size])) as Record<Operation, number>,
  };
}
