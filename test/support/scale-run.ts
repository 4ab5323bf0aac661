import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { PlanLimits } from '../../definitions/plans';
import { type TableName, tables } from '../../definitions/tables';
import { createHandler as createPetHandler } from '../../functions/create-pet/handler';
import type { PetLayout } from '../../functions/data/pet-layout';
import type { IdAllocator } from '../../functions/domain/id-allocator';
import type { Pet, PetStatus } from '../../functions/domain/pet';
import { createPet } from '../../functions/domain/pet-creation';
import { findPet, listPets, type PetPages, type PetStore } from '../../functions/domain/pets';
import { createHandler as getPetHandler } from '../../functions/get-pet/handler';
import { toAuthorizerContext } from '../../functions/http/caller';
import { createHandler as listPetsHandler } from '../../functions/list-pets/handler';
import { createDocumentClient, type Dependencies } from '../../functions/runtime/dependencies';
import { localCredentials } from '../../local/local-api';
import { ensureTables, tableNamesFor } from '../../local/tables';
import { lambdaContext, type RestRequest, restProxyEvent } from './api-gateway-events';
import { testDynamoDbClient } from './dynamo';
import { type KeyUsage, keySchemasOf, PartitionLimitProxy } from './partition-limit-proxy';

/**
 * The scale test: the baseline mix (10 % creates, 60 % lists, 30 % gets; 1× is
 * 1,000 requests per second, SCALING.md) at a multiple of today's traffic,
 * divided by the simulator's factor along with DynamoDB's partition limits, so
 * that each partition's load relative to its limit is what it would be at that
 * multiple. Requests go through many simulated Lambda instances, each with its
 * own SDK client, id allocator and caches (a pet store built by `design`), to
 * the partition-limit simulator in front of DynamoDB Local.
 *
 * Lists are walks: a request asks for the next page of a walk under way (once
 * WALKERS are) or starts one; walks left at the end are finished afterwards.
 * The run starts where a service runs: every create instance already holds a
 * block (warmUp), every list instance has walked the lists once (its sealed
 * ranges kept), and the simulator judges from then on. Creates go to the
 * instances in turn and gets to the pets in turn, as even as the service's
 * aggregate is (thinning: test/support/partition-limit-proxy.ts).
 * A finished walk must hold, exactly once and in ascending order, every pet
 * whose create had answered `stalenessMs` before the walk began.
 */
export interface ScaleDesign {
  /** What this design is, for the report. */
  name: string;
  /** The pets' layout the handlers run with (Dependencies.petLayout). */
  layout: PetLayout;
  /** One simulated instance's pet store, list use case and id allocator, on `layout` (the design's, its block lifetime scaled: runLayout). */
  instance(dependencies: Dependencies, layout: PetLayout): { pets: PetStore; list: PetPages; ids: IdAllocator };
  /** How late a new pet may appear in lists (caches of the design), in ms. */
  stalenessMs: number;
}

export interface ScaleOptions {
  /** DynamoDB Local. */
  endpoint: string;
  design: ScaleDesign;
  multiple: number;
  /** DynamoDB's limits and the traffic are both divided by this. */
  factor: number;
  seconds: number;
  /**
   * Simulated Lambda instances per function. Readers' caches are per instance,
   * so the faithful number of list and get instances is the real concurrency
   * divided by the factor (24,000 listPets executions at 1000× / 10,000 ≈ 2.4);
   * creates need more, so that blocks spread as many real instances' would.
   */
  instances: Record<Operation, number>;
  /** Pets that exist before the run, created an hour earlier (a table in service has a past). */
  seedPets: number;
  /** Page sizes walks use. */
  limits?: number[];
  /**
   * What list clients send. `adversarial`: every page of 100, 10 % of new walks
   * on a status few pets have (1 pet in 50 is sold), one list request in ten
   * the first page of that short list polled, and half the creates from a few
   * instances (options.instances.createPet), half from many (as many more as
   * make one instance for each list shard: their blocks, handed out in turn, lie
   * on distinct shards).
   */
  mix?: 'default' | 'adversarial';
  /**
   * What the requests go through: the use cases (default; light enough for this machine to keep the rate) or the
   * deployed handlers (functions/<operation>/handler.ts: API Gateway events of Business keys, the limiter writing
   * each key's counter item; this machine's two cores drive about half the rate through them).
   */
  through?: 'use cases' | 'handlers';
  /** Burst the simulator lends each key, in seconds of its rate (default none, as AWS: test/support/partition-limit-proxy.ts). */
  burstSeconds?: number;
  log?: (line: string) => void;
}

export interface ScaleReport {
  text: string;
  throttles: number;
  /** Throttled calls while the mix ran (the rest came while the walks under way were finished). */
  throttlesDuringLoad: number;
  failedRequests: number;
  failedDuringLoad: number;
  walks: { finished: number; wrong: string[] };
  createsStoredOnce: boolean;
}

export type Operation = 'createPet' | 'listPets' | 'getPet';

interface Walk {
  status?: PetStatus;
  limit: number;
  startedAt: number;
  cursor?: string;
  ids: number[];
  pages: number;
  /** A page of it is being asked for. */
  busy: boolean;
}

const MIX: [Operation, number][] = [
  ['createPet', 0.1],
  ['listPets', 0.6],
  ['getPet', 0.3],
];
const BASELINE_RPS = 1_000;
const LIST_SHARE = (MIX.find(([operation]) => operation === 'listPets') as [Operation, number])[1];
const MAX_IN_FLIGHT = 64;
/**
 * Clients walking lists at once, each asking for its walk's next page when the
 * last one has answered: a list request goes on with an idle walk once this
 * many are under way, else starts one. Every walk goes on to the list's end.
 */
const WALKERS = 50;

export async function runScale(options: ScaleOptions): Promise<ScaleReport> {
  const { endpoint, design, multiple, factor, seconds } = options;
  const log = options.log ?? (() => {});
  const names = tableNamesFor(`scale-${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`);
  const admin = testDynamoDbClient(endpoint);
  await ensureTables(admin, names, { timeToLive: false });
  // Counter items carry one key's requests each, at every multiple: judged at AWS's own limits.
  const proxy = await PartitionLimitProxy.start(endpoint, keySchemasOf(tables, names), {
    factor,
    burstSeconds: options.burstSeconds,
    unscaledTables: [names.rateLimits],
  });

  const layout = runLayout(design.layout, factor);
  const instance = (caller: string, viaProxy: boolean, clock = () => Date.now()) => {
    const dependencies: Dependencies = {
      db: createDocumentClient({
        endpoint: viaProxy ? proxy.endpoint : endpoint,
        region: 'local',
        // The deployed number of attempts (a throttled call is tried once more); generous timeouts for a loaded machine.
        budget: { connectionTimeoutMs: 5_000, requestTimeoutMs: 15_000, maxAttempts: 2 },
        ...localCredentials(),
      }),
      tableNames: names as Record<TableName, string>,
      clock,
    };
    // The simulator attributes each call to its caller by this header.
    dependencies.db.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers['x-sim-caller'] = caller;
        return next(args);
      },
      { step: 'build', name: 'simulatedCaller' },
    );
    return { ...design.instance(dependencies, layout), dependencies };
  };

  const adversarialMix = options.mix === 'adversarial';
  const seedStatus = adversarialMix ? rareSoldStatus : statusFor;
  // The past: pets created an hour ago, straight into DynamoDB Local.
  const hourAgo = () => Date.now() - 3_600_000;
  const seeder = instance('seed', false, hourAgo);
  const known: { pet: Pet; at: number }[] = [];
  for (let i = 0; i < options.seedPets; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, options.seedPets - i) }, (_, j) =>
        createPet({ name: `Seed ${i + j}`, categoryId: 1, status: seedStatus(i + j) }, { ...seeder, clock: hourAgo }),
      ),
    );
    for (const pet of batch) known.push({ pet, at: hourAgo() });
  }
  seeder.dependencies.db.destroy();

  const adversarial = adversarialMix;
  const statusOf = seedStatus;
  // The many: as many more as put every instance's block on a shard of its own (blocks are handed out in turn).
  const manyCount = Math.max(options.instances.createPet, layout.shardCount - options.instances.createPet);
  const manyCreators = adversarial ? Array.from({ length: manyCount }, () => instance('createPet', true)) : [];
  const pools: Record<Operation, ReturnType<typeof instance>[]> = {
    createPet: Array.from({ length: options.instances.createPet }, () => instance('createPet', true)),
    listPets: Array.from({ length: options.instances.listPets }, () => instance('listPets', true)),
    getPet: Array.from({ length: options.instances.getPet }, () => instance('getPet', true)),
  };
  const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)] as T;
  const outcomes: Record<Operation, { ok: number; failed: Map<string, number> }> = {
    createPet: { ok: 0, failed: new Map() },
    listPets: { ok: 0, failed: new Map() },
    getPet: { ok: 0, failed: new Map() },
  };
  const fail = (op: Operation, error: unknown) => {
    const name = error instanceof Error ? `${error.name}: ${error.message.slice(0, 140)}` : String(error);
    outcomes[op].failed.set(name, (outcomes[op].failed.get(name) ?? 0) + 1);
  };
  const limits = options.limits ?? (options.mix === 'adversarial' ? [100] : [20, 100]);
  const active: Walk[] = [];
  const finished: Walk[] = [];
  let walkNumber = 0;
  let listNumber = 0;
  /** The pet the last get asked for (an index into known, which grows: a sweep, not a modulo that would stall on one pet). */
  let nextGet = -1;

  const calls = options.through === 'handlers' ? handlerCalls(60 * multiple, layout) : useCaseCalls;
  const inTurn = { few: turns(pools.createPet), many: turns(manyCreators) };
  // The warm-up is the fleet's past, spread over time in service: the simulator judges the load from here on.
  proxy.judging = false;
  known.push(...(await warmUp([...pools.createPet, ...manyCreators], calls)));
  // Each list instance has walked the lists its clients walk, as a warm instance in service has: its sealed ranges are kept.
  const walked: ListQuery[] = limits.flatMap((limit) => [{ limit }, ...(adversarial ? [{ limit, status: 'sold' as const }] : [])]);
  for (const at of pools.listPets) for (const query of walked) await walkToEnd(at, query, calls);
  proxy.reset();
  proxy.judging = true;

  const page = async (walk: Walk): Promise<void> => {
    const result = await calls.list(pick(pools.listPets), { limit: walk.limit, status: walk.status, cursor: walk.cursor });
    walk.ids.push(...result.pets.map((pet) => pet.id));
    walk.pages++;
    walk.cursor = result.nextCursor;
    if (!result.nextCursor) {
      active.splice(active.indexOf(walk), 1);
      finished.push(walk);
    }
  };
  const run: Record<Operation, () => Promise<void>> = {
    createPet: async () => {
      const n = known.length;
      // Adversarial: every other create from the many instances, the rest from the few; each pool's instances in turn.
      const at = adversarial && n % 2 === 1 ? inTurn.many() : inTurn.few();
      const pet = await calls.create(at, { name: `Pet ${n}`, categoryId: 2, status: statusOf(n) });
      known.push({ pet, at: Date.now() });
    },
    getPet: async () => {
      // The pets in turn: in service gets spread over millions of pets, and one pet's key takes a sliver of its limit;
      // at random over this run's few thousand, chance would put two gets of one pet in one window (thinning).
      nextGet = nextGet + 1 < known.length ? nextGet + 1 : 0;
      await calls.get(pick(pools.getPet), (known[nextGet] as { pet: Pet }).pet.id);
    },
    listPets: async () => {
      if (adversarial && listNumber++ % 10 === 9) {
        // A client polling the first page of a short filtered list.
        await calls.list(pick(pools.listPets), { limit: 100, status: 'sold' });
        return;
      }
      const idle = active.filter((walk) => walk.cursor !== undefined && !walk.busy);
      let walk: Walk;
      if (idle.length > 0 && active.length >= WALKERS) walk = pick(idle);
      else {
        walk = {
          limit: limits[walkNumber % limits.length] as number,
          status: adversarial ? (walkNumber % 10 === 9 ? 'sold' : undefined) : walkNumber % 3 === 2 ? 'available' : undefined,
          startedAt: Date.now(),
          ids: [],
          pages: 0,
          busy: false,
        };
        walkNumber++;
        active.push(walk);
      }
      walk.busy = true;
      try {
        await page(walk);
      } finally {
        walk.busy = false;
      }
    },
  };

  const rate = (BASELINE_RPS * multiple) / factor;
  const total = Math.round(rate * seconds);
  log(`${design.name}: ${multiple}× at factor ${factor}: ${rate} requests per second for ${seconds} s`);
  const start = Date.now();
  let inFlight = 0;
  let late = 0;
  const running = new Set<Promise<void>>();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    while (inFlight >= MAX_IN_FLIGHT) await Promise.race(running);
    if (Date.now() - due > 1_000) late++;
    const op = chooseOperation(i);
    inFlight++;
    const task = run[op]()
      .then(() => {
        outcomes[op].ok += 1;
      })
      .catch((error) => fail(op, error))
      .finally(() => {
        inFlight--;
        running.delete(task);
      });
    running.add(task);
  }
  await Promise.all(running);
  const loadSeconds = (Date.now() - start) / 1000;
  const throttledDuringLoad = proxy.throttles.length;
  const failedDuringLoad = failedCount(outcomes);
  // Each key's units at the end of the mix (copies: the simulator keeps adding to its own).
  const usageOfLoad = new Map([...proxy.usage].map(([id, u]) => [id, { ...u }]));
  const finishStart = Date.now();

  // Finish every walk under way at the mix's rate of list requests, so the run stays at its multiple
  // (unpaced, these pages alone hit the newest blocks faster than any multiple's lists would; throttles still count).
  const listGapMs = 1000 / (rate * LIST_SHARE);
  let reportedAt = Date.now();
  const finishing = new Set<Promise<void>>();
  while (active.length > 0) {
    if (Date.now() - reportedAt > 30_000) {
      reportedAt = Date.now();
      log(`finishing walks: ${active.length} under way, ${finished.length} finished`);
    }
    const walk = active.find((under) => !under.busy);
    if (!walk) {
      await Promise.race(finishing);
      continue;
    }
    walk.busy = true;
    const next = page(walk)
      .catch((error) => {
        fail('listPets', error);
        active.splice(active.indexOf(walk), 1);
      })
      .finally(() => {
        walk.busy = false;
        finishing.delete(next);
      });
    finishing.add(next);
    await new Promise((resolve) => setTimeout(resolve, listGapMs));
  }
  await Promise.all(finishing);

  const finishSeconds = Math.max((Date.now() - finishStart) / 1000, 1);

  const wrong: string[] = [];
  for (const walk of finished) {
    const problem = checkWalk(walk, known, design.stalenessMs);
    if (problem) wrong.push(problem);
  }
  const stored = await scanPets(admin, names.pets);
  const createdIds = known.map((entry) => entry.pet.id);
  const createsStoredOnce = new Set(createdIds).size === createdIds.length && createdIds.every((id) => stored.has(id));

  const lines: string[] = [];
  lines.push(
    `design: ${design.name}`,
    `load: ${multiple}× today's traffic at factor ${factor}: ${rate} requests per second (${total} requests in ${loadSeconds.toFixed(1)} s, ${late} started over 1 s late), ` +
      `simulated instances: ${Object.entries(options.instances)
        .map(([op, n]) => `${n} ${op}`)
        .join(', ')}; ${options.seedPets} pets before the run`,
    `limits per partition-key value: ${fmt(proxy.writeRate)} write units/s and ${fmt(proxy.readRate)} read units/s (AWS's 1,000 and 3,000 divided by ${factor}), ${proxy.burstSeconds} s of burst; ` +
      `without burst each call is judged over max(1 s, its units / the key's rate): ${fmt(PartitionLimitProxy.windowMs(1, proxy.writeRate) / 1000)} s for a write unit, ` +
      `${fmt(PartitionLimitProxy.windowMs(0.5, proxy.readRate) / 1000)} s for half a read unit`,
    '',
    '| operation | requests | ok | failed | throttled DynamoDB calls |',
    '|---|---|---|---|---|',
  );
  for (const [op] of MIX) {
    const failed = [...outcomes[op].failed.values()].reduce((a, b) => a + b, 0);
    const throttled = proxy.throttles.filter((t) => t.caller === op).length;
    lines.push(`| ${op} | ${outcomes[op].ok + failed} | ${outcomes[op].ok} | ${failed} | ${throttled} |`);
  }
  const byKey = proxy.throttlesByKey();
  lines.push(
    '',
    `throttled DynamoDB calls: ${proxy.throttles.length} (${throttledDuringLoad} during the load, the rest while finishing walks)`,
  );
  // How far below its limits each throttled key ran on average over the run: a wall, or two calls that chance put in one window.
  const runSeconds = Math.max(loadSeconds + finishSeconds, 1);
  const shareOf = (resource: string, key: string) => {
    const usage = proxy.usage.get(`${resource}\u0000${key}`);
    return {
      write: (usage?.writeUnits ?? 0) / (proxy.writeRate * runSeconds),
      read: (usage?.readUnits ?? 0) / (proxy.readRate * runSeconds),
    };
  };
  for (const entry of byKey.slice(0, 8)) {
    const share = shareOf(entry.resource, entry.key);
    lines.push(
      `  ${entry.count} on ${entry.resource.replace(names.pets, 'pets')} key "${entry.key}" (over the run, ${pct(share.write)} of its write and ${pct(share.read)} of its read limit)`,
    );
  }
  if (byKey.length > 0) {
    const busiest = Math.max(...byKey.map((entry) => Math.max(...Object.values(shareOf(entry.resource, entry.key)))));
    lines.push(
      `  ${byKey.length} keys throttled, the busiest of them at ${pct(busiest)} of its limit over the run (one under 100 % was refused calls that chance put in one window, not a wall: partition-limit-proxy.ts, thinning)`,
    );
  }
  // Units per second on the hottest keys, during the mix and while the walks were finished (each over its own time).
  const ofFinish = [...proxy.usage].map(([id, u]) => {
    const before = usageOfLoad.get(id);
    return { ...u, readUnits: u.readUnits - (before?.readUnits ?? 0), writeUnits: u.writeUnits - (before?.writeUnits ?? 0) };
  });
  const hottest = (usage: KeyUsage[], kind: 'readUnits' | 'writeUnits', seconds: number) =>
    [...usage]
      .sort((a, b) => b[kind] - a[kind])
      .slice(0, 3)
      .map((u) => `${u.resource.replace(names.pets, 'pets')} "${u.key}" ${fmt(u[kind] / seconds)}`)
      .join('; ');
  const load = [...usageOfLoad.values()];
  const mixSeconds = Math.max(loadSeconds, 1);
  lines.push(
    `hottest write keys during the mix (units/s over ${fmt(mixSeconds)} s; limit ${fmt(proxy.writeRate)}): ${hottest(load, 'writeUnits', mixSeconds)}`,
    `hottest read keys during the mix (units/s over ${fmt(mixSeconds)} s; limit ${fmt(proxy.readRate)}): ${hottest(load, 'readUnits', mixSeconds)}`,
    `hottest read keys while finishing walks (units/s over ${fmt(finishSeconds)} s; limit ${fmt(proxy.readRate)}): ${hottest(ofFinish, 'readUnits', finishSeconds)}`,
    `walks finished: ${finished.length}, wrong: ${wrong.length}${wrong.length ? ` (${wrong.slice(0, 3).join('; ')})` : ''}`,
    `creates: ${createdIds.length - options.seedPets} during the run; every created pet stored once: ${createsStoredOnce ? 'yes' : 'NO'}`,
  );
  for (const [op] of MIX) for (const [name, count] of outcomes[op].failed) lines.push(`  ${op} failed ${count}×: ${name}`);

  for (const pool of [...Object.values(pools), manyCreators]) for (const at of pool) at.dependencies.db.destroy();
  admin.destroy();
  await proxy.close();
  return {
    text: lines.join('\n'),
    throttles: proxy.throttles.length,
    throttlesDuringLoad: throttledDuringLoad,
    failedRequests: failedCount(outcomes),
    failedDuringLoad,
    walks: { finished: finished.length, wrong },
    createsStoredOnce,
  };
}

type SimulatedInstance = { pets: PetStore; list: PetPages; ids: IdAllocator; dependencies: Dependencies };
type ListQuery = { limit: number; status?: PetStatus; cursor?: string };

/** The three operations as the run sends them. */
interface Calls {
  create(at: SimulatedInstance, input: { name: string; categoryId: number; status: PetStatus }): Promise<Pet>;
  list(at: SimulatedInstance, query: ListQuery): Promise<{ pets: Pet[]; nextCursor?: string }>;
  get(at: SimulatedInstance, id: number): Promise<unknown>;
}

const useCaseCalls: Calls = {
  create: (at, input) => createPet(input, { ...at, clock: at.dependencies.clock }),
  list: (at, query) => listPets(query, { list: at.list, clock: at.dependencies.clock }),
  get: (at, id) => findPet(id, { pets: at.pets, clock: at.dependencies.clock }),
};

/**
 * The run's layout: the design's, with the block lifetime scaled by the factor
 * over 1,000. In service at 1000× an instance fills its block in seconds and
 * renews it by use, well within the lifetime; a simulated instance takes one
 * create in every several seconds, so at the deployed lifetime every instance
 * would renew by age, all within moments of each other, far more reservations
 * than the service makes. Readers judge sealed blocks on the same lifetime.
 */
export function runLayout(layout: PetLayout, factor: number): PetLayout {
  return { ...layout, blockLifetimeMs: layout.blockLifetimeMs * Math.max(1, factor / 1_000) };
}

/**
 * The instances of a pool one after another: the creates of a fleet spread over
 * its blocks (and so over the shards) evenly, as the creates of thousands of
 * instances do in service. Chosen at random, a scaled-down run would put two
 * creates on one shard within one write's window far more often than the
 * service's traffic does (thinning: test/integration/partition-limit-proxy.test.ts).
 */
function turns<T>(pool: T[]): () => T {
  let next = 0;
  return () => pool[next++ % pool.length] as T;
}

/** Every page of a walk, one after the other (the warm-up's: nothing is checked). */
async function walkToEnd(at: SimulatedInstance, query: ListQuery, calls: Calls): Promise<void> {
  let cursor: string | undefined;
  do cursor = (await calls.list(at, { ...query, cursor })).nextCursor;
  while (cursor);
}

/**
 * One create from each create instance before the load, so that each holds a
 * block, as a fleet in service does: the run starts where the service runs,
 * not with every instance reserving its first block at once.
 */
async function warmUp(creators: SimulatedInstance[], calls: Calls): Promise<{ pet: Pet; at: number }[]> {
  const warmed: { pet: Pet; at: number }[] = [];
  for (let i = 0; i < creators.length; i += 16) {
    const batch = creators.slice(i, i + 16);
    const pets = await Promise.all(batch.map((at, j) => calls.create(at, { name: `Warm ${i + j}`, categoryId: 2, status: 'available' })));
    for (const pet of pets) warmed.push({ pet, at: Date.now() });
  }
  return warmed;
}

const businessLimits: PlanLimits = { perMinute: 1_000, perDay: 100_000 };

/**
 * The operations through the deployed handlers, each request from one of `keys`
 * Business keys (60 at 1×, each at its full 1,000 a minute), so each key's
 * counter item takes one key's requests, as it would at that multiple.
 */
function handlerCalls(keys: number, layout: PetLayout): Calls {
  // Each simulated instance's handlers, built at its first request (a run through the use cases builds none).
  const handlers = new Map<SimulatedInstance, ReturnType<typeof handlersOf>>();
  const handlersAt = (at: SimulatedInstance) => {
    if (!handlers.has(at)) handlers.set(at, handlersOf({ ...at.dependencies, petLayout: layout }));
    return handlers.get(at) as ReturnType<typeof handlersOf>;
  };
  const call = async (at: SimulatedInstance, operation: Operation, request: RestRequest) => {
    const keyId = `key_scale_${Math.floor(Math.random() * keys)}`;
    const caller = { keyId, customerId: keyId, plan: 'business' as const, limits: businessLimits };
    const event = restProxyEvent({ ...request, headers: { Authorization: 'Bearer psk_scale' }, authorizer: toAuthorizerContext(caller) });
    const answer = (await handlersAt(at)[operation](event, lambdaContext(operation))) as APIGatewayProxyResult;
    if (answer.statusCode >= 300)
      throw new Error(`HTTP ${answer.statusCode}: ${(JSON.parse(answer.body) as { message?: string }).message}`);
    return answer;
  };
  return {
    create: async (at, input) => {
      const answer = await call(at, 'createPet', { method: 'POST', resource: '/pets', path: '/pets', body: JSON.stringify(input) });
      return JSON.parse(answer.body) as Pet;
    },
    list: async (at, { limit, status, cursor }) => {
      const query = { limit: String(limit), ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) };
      const answer = await call(at, 'listPets', { method: 'GET', resource: '/pets', path: '/pets', query });
      return { pets: JSON.parse(answer.body) as Pet[], nextCursor: answer.headers?.['X-Next-Cursor'] as string | undefined };
    },
    get: (at, id) => {
      const petId = String(id);
      return call(at, 'getPet', { method: 'GET', resource: '/pets/{petId}', path: `/pets/${petId}`, pathParameters: { petId } });
    },
  };
}

/** One simulated Lambda instance's three functions, as deployed (functions/<operation>/handler.ts), on its own dependencies. */
function handlersOf(dependencies: Dependencies) {
  return { createPet: createPetHandler(dependencies), listPets: listPetsHandler(dependencies), getPet: getPetHandler(dependencies) };
}

function failedCount(outcomes: Record<Operation, { failed: Map<string, number> }>): number {
  return Object.values(outcomes).reduce((sum, o) => sum + [...o.failed.values()].reduce((a, b) => a + b, 0), 0);
}

/** Deterministic mix: in every 10 requests, 1 create, 6 lists, 3 gets, interleaved. */
function chooseOperation(i: number): Operation {
  const slot = i % 10;
  return slot === 0 ? 'createPet' : slot % 3 === 0 ? 'getPet' : 'listPets';
}

/** Most pets are available (the default), some pending, a few sold. */
const STATUSES: PetStatus[] = ['available', 'available', 'available', 'pending', 'sold'];
function statusFor(n: number): PetStatus {
  return STATUSES[n % STATUSES.length] as PetStatus;
}

/** The adversarial mix's statuses: one pet in 50 sold, a status few pets have. */
function rareSoldStatus(n: number): PetStatus {
  return n % 50 === 49 ? 'sold' : n % 5 === 3 ? 'pending' : 'available';
}

function checkWalk(walk: Walk, known: { pet: Pet; at: number }[], stalenessMs: number): string | undefined {
  for (let i = 1; i < walk.ids.length; i++) {
    if ((walk.ids[i] as number) <= (walk.ids[i - 1] as number)) return `walk not ascending at ${walk.ids[i]}`;
  }
  const seen = new Set(walk.ids);
  const missing = known.filter(
    (entry) =>
      entry.at <= walk.startedAt - stalenessMs &&
      (walk.status === undefined || entry.pet.status === walk.status) &&
      !seen.has(entry.pet.id),
  );
  if (missing.length > 0)
    return `walk (limit ${walk.limit}, ${walk.status ?? 'all'}) missed ${missing.length} pets, e.g. ${missing[0]?.pet.id}`;
  return undefined;
}

async function scanPets(client: DynamoDBClient, table: string): Promise<Set<number>> {
  const ids = new Set<number>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start as never }));
    for (const item of page.Items ?? []) {
      const id = Number(unmarshall(item).id);
      if (id > 0) ids.add(id);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return ids;
}

const pct = (share: number) => `${Math.round(share * 100)} %`;
const fmt = (n: number) => (n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2));
