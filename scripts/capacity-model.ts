/**
 * `npx tsx scripts/capacity-model.ts [--write]`: the capacity model of
 * SCALING.md on paper. For a traffic mix and today's Business plan traffic, it
 * computes the load on every component that has a limit (API Gateway, Lambda
 * concurrency, each DynamoDB partition that one key or index concentrates
 * traffic on) at 1×, 10×, 100× and 1000×, and the multiple at which each one binds.
 * It prints the tables as Markdown; --write replaces them in SCALING.md. A test
 * (test/infra/capacity-model.test.ts) keeps SCALING.md equal to this output.
 *
 * Nothing here is measured in AWS: the limits are AWS's published defaults
 * (each cited below), the per-request costs come from the code
 * (functions/data/*), and what
 * the limiter costs a request, is measured on DynamoDB Local with the real limiter
 * (limiterMeasured). The assumptions are named below; change them and rerun.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PlanLimits, plans } from '../definitions/plans';
import { authorizer } from '../definitions/routes';
import { listSharding } from '../definitions/tables';
import { petLayout } from '../functions/data/pet-layout';
import { DENSE_SHARE, MAX_BLOCKS_PER_PAGE } from '../functions/domain/pet-walk';

/**
 * AWS's default limits (per account and Region unless said otherwise), each with its source:
 * - API Gateway: "Amazon API Gateway quotas", https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html
 *   (10,000 requests per second per account and Region, raisable).
 * - Lambda: "Lambda quotas", https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 *   (1,000 concurrent executions per Region, raisable).
 * - DynamoDB table quotas: "Quotas in Amazon DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
 *   (on-demand: 40,000 read and 40,000 write request units per table, raisable; each global
 *   secondary index has its own).
 * - DynamoDB partitions: "Understanding DynamoDB warm throughput in different scenarios",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html
 *   ("each individual partition is limited to 1,000 write units per second and 3,000 read units
 *   per second"; no quota raises it). One partition-key value is served by one partition unless
 *   DynamoDB splits it for heat, which cannot help keys whose sort key only grows ("Best practices
 *   for designing and using partition keys effectively",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 * - DynamoDB surges: "Pre-warming a table for on-demand capacity mode",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html
 *   (a new on-demand table sustains up to 4,000 writes and 12,000 reads per second; later up to
 *   twice its previous peak within 30 minutes; warm throughput raises it ahead of a peak).
 * - DynamoDB units: "DynamoDB read and write operations",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
 *   (a read costs one unit per started 4 KB, half when eventually consistent, a Query summing its
 *   items first; a write one unit per started 1 KB; an UpdateItem is charged for the larger of the
 *   item before and after it, whatever it changes; a write whose condition fails still costs the
 *   units of the item as it is), and "DynamoDB item sizes and formats",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
 *   (an item's size: its attribute names and values).
 */
export const awsLimits = {
  apiGatewayRps: 10_000,
  lambdaConcurrency: 1_000,
  /** One partition key value (one partition): write units of 1 KB per second. */
  partitionWriteUnits: 1_000,
  /** One partition key value: read units per second (an eventually consistent read of 4 KB costs 0.5). */
  partitionReadUnits: 3_000,
  onDemandInstantWriteUnits: 4_000,
  onDemandInstantReadUnits: 12_000,
  /** On-demand: per-table maximum (soft quota), reads and writes each; each index has its own. */
  tableQuotaUnits: 40_000,
} as const;

const business: PlanLimits = (() => {
  const limits = plans.business.limits;
  if (limits === 'custom') throw new Error('The Business plan has fixed limits.');
  return limits;
})();

/** The assumptions of the model: every number that is ours, not AWS's. */
export const assumptions = {
  /**
   * Today's Business plan traffic: this many Business keys, each at its full
   * per-minute limit at the same time (a peak: the daily quota lets each key
   * keep that up for 100 minutes a day). 60 keys × 1,000/min = 1,000 req/s.
   */
  businessKeysAtPeak: 60,
  /** Share of requests per operation. */
  mix: { listAll: 0.4, listByStatus: 0.2, getPet: 0.3, createPet: 0.1 },
  /** Page size of a list (the default `limit`); a list reads one more item to know if a next page exists. */
  pageSize: 20,
  /** Share of list pages that are first pages (the rest are next pages, anywhere in the list). */
  firstPageShare: 0.5,
  /** Queries per page that is not served from an instance's cache (bench: requests per call). */
  queriesPerPage: 1.2,
  /**
   * The fewest pets a list holds while it carries the model's traffic: an hour
   * of today's creates (100 a second). Pets are never deleted, and the table
   * grows with load (at m× it gains m times as many an hour); the model keeps
   * this size at every multiple, which overstates the pages that reach the end.
   * See tailPageShare.
   */
  listPetsAtLeast: 360_000,
  /**
   * Size of a pet item as stored, with createdAt and writeToken (measured on
   * DynamoDB Local by the item-size rules: 160 to 200 bytes); an index entry
   * projects all of it.
   */
  petItemBytes: 200,
  /** Share of creates that send an Idempotency-Key (two writes to the idempotency table each). */
  idempotentCreateShare: 1,
  /** Warm Lambda durations in ms: DynamoDB calls of 5 to 10 ms in the region plus our own work. */
  durationsMs: { listPets: 40, createPet: 60, getPet: 30, authorizer: 20 },
  /**
   * How long a failing request holds its execution while DynamoDB fails: each
   * call waits up to its 1 s timeout and is tried twice, then one clean-up call,
   * within the function's time budget (functions/runtime/dependencies.ts):
   * about 4.4 s, measured by the fault tests.
   */
  failedRequestMs: 4_400,
  /** How much more than its average the busiest shard takes (definitions/tables.ts, listSharding). */
  shardImbalance: listSharding.expectedImbalance,
} as const;

/**
 * Share of list pages that reach the newest pets: the last page of a walk.
 * Such a page needs a view of the newest pets (which blocks exist: a read of
 * one copy of the block counter; and the blocks still being filled) taken
 * since its walk began. An instance's view serves the pages of
 * walks begun over a second before it was read, for 10 s (recentViewSeconds):
 * so however many of those pages an instance serves, it reads each newest block
 * and a copy of the counter at most once per 10 s for them. A page whose walk began
 * after the instance's view (a first page at the newest pets: a list shorter
 * than a page; or a walk that got there within seconds) reads afresh.
 *
 * Derived, not chosen: a page reaches the newest pets only as the last page of
 * a walk that followed every `next` link from the first page (a list cannot
 * start at its end). A walk over P pets takes P / pageSize pages, every one of
 * them in the list traffic, and next pages are (1 − firstPageShare) of that
 * traffic: so at most (1 − firstPageShare) × pageSize / P of the list pages are
 * last pages. With P = listPetsAtLeast that is a few in 100,000, and such walks
 * take minutes, so none of their last pages reads afresh; the model still
 * charges all of them afresh. Left out: lists far smaller (a new table in its
 * first minutes, a status few pets have, a list shorter than a page polled by
 * its first page); tailShareBindingAt says how many pages reading afresh the
 * design takes. Clients that fetch their last page's URL again to poll are
 * walks under way: their pages end on views.
 */
export const tailPageShare = ((1 - assumptions.firstPageShare) * assumptions.pageSize) / assumptions.listPetsAtLeast;

/**
 * What list clients send, for the list rows. `default`: the assumptions above.
 * `adversarial`: what the contract allows a hostile but well-behaved client
 * mix: every page of 100 (101 pets read at once: 2.5 read units), 10 % of list
 * pages on a status few pets have (each such page reads MAX_BLOCKS_PER_PAGE
 * blocks, a Query each, mostly empty: half a unit each), and short filtered
 * lists polled by their first page (first pages, kept by each instance's range
 * cache for a minute: it keeps what is hit).
 *
 * Queries a page, from the walk (functions/domain/pet-walk.ts): at the model's
 * traffic every create instance fills its block (200 ids in about 12 s, within
 * its minute), so the list of all pets is dense, and a page of a dense list
 * stops at a block's end (DENSE_SHARE): one Query of at most limit + 1 pets,
 * whatever the limit. test/unit/pet-walk.test.ts walks such a list in memory and
 * checks the Queries and read units below. The default mix keeps the bench's
 * 1.2 (a list with part-used blocks; it costs the same read units).
 */
export interface ListMix {
  name: 'default' | 'adversarial';
  pageSize: number;
  /** Queries per page of all pets (or of a status most pets have). */
  queriesPerPage: number;
  /** Share of list pages on a status few pets have. */
  rareStatusShare: number;
  /** Queries per page of such a walk: MAX_BLOCKS_PER_PAGE (functions/domain/pet-walk.ts). */
  rareQueriesPerPage: number;
}

export const listMixes: Record<ListMix['name'], ListMix> = {
  default: {
    name: 'default',
    pageSize: assumptions.pageSize,
    queriesPerPage: assumptions.queriesPerPage,
    rareStatusShare: 0,
    rareQueriesPerPage: MAX_BLOCKS_PER_PAGE,
  },
  adversarial: { name: 'adversarial', pageSize: 100, queriesPerPage: 1, rareStatusShare: 0.1, rareQueriesPerPage: MAX_BLOCKS_PER_PAGE },
};

/**
 * Read units of a page: one Query of pageSize + 1 pets, or (the share
 * queriesPerPage − 1 of pages) two Queries of half as many each, every Query
 * rounded up to 4 KB on its own.
 */
export function pageReadUnits(mix: ListMix): number {
  const twoQueries = Math.min(1, Math.max(0, mix.queriesPerPage - 1));
  const items = mix.pageSize + 1;
  return (1 - twoQueries) * queryReadUnits(items) + twoQueries * 2 * queryReadUnits(Math.ceil(items / 2));
}

/**
 * A page of a status that is common but under DENSE_SHARE of the pets: its
 * pets of one block fall short of a page, so it reads on into the next block:
 * charged two Queries (a status under a quarter of the pets reads more blocks,
 * up to the rare status's MAX_BLOCKS_PER_PAGE).
 */
export const commonStatusPage = (mix: ListMix): ListMix => ({ ...mix, queriesPerPage: Math.max(mix.queriesPerPage, 2) });

/** Ids per block, shards per list index, copies of the block counter (functions/data/pet-layout.ts). */
export const layout = petLayout;
/** How long an instance keeps its views of the newest pets (which blocks exist, blocks being filled), and sealed ranges (pet-repository.ts). */
const recentViewSeconds = 10;
const sealedCacheSeconds = 60;
/** What one read of which blocks exist costs: a strongly consistent read of one small copy of the block counter. */
const frontierReadUnitsPerRead = 1;

export const multiples = [1, 10, 100, 1_000] as const;

/**
 * hard: a per-partition limit no quota request raises; soft quota: AWS raises
 * it on request; surge: on-demand tables take twice their previous peak at once
 * and adapt within about 30 minutes (or sooner with warm throughput); brownout:
 * not growth but a failure mode at today's traffic.
 */
export type Kind = 'hard' | 'soft quota' | 'surge' | 'brownout';

export interface Component {
  name: string;
  /** What is measured, per second. */
  unit: string;
  limit: number;
  kind: Kind;
  /** The load at the multiple m of today's traffic. */
  load: (m: number) => number;
  /** What the table says in its "binds at" column when the load does not grow with m. */
  constant?: string;
}

const baselineRps = (assumptions.businessKeysAtPeak * business.perMinute) / 60;
const perKeyRps = business.perMinute / 60;

/** Read units of one eventually consistent Query returning `items` pets: one 4 KB read at least (an empty Query is charged one). */
export function queryReadUnits(items: number): number {
  return Math.max(1, Math.ceil((items * assumptions.petItemBytes) / 4096)) * 0.5;
}

/** Write units of one pet write (table or index entry). */
const petWriteUnits = Math.ceil(assumptions.petItemBytes / 1024);

/**
 * The lease limiter's DynamoDB units (rateLimits), measured on DynamoDB Local
 * with the real limiter (test/integration/limiter-write-units.test.ts measures
 * them and keeps these numbers equal to what it finds). Each request is a lease
 * write (a conditional UpdateItem of an item under 1 KB: one write unit) or a
 * strongly consistent read of the key's item (one read unit), so that the key
 * tool's changes show at the key's next request.
 */
export const limiterMeasured = {
  /** A Business key's full minute (1,000 requests), spread over it and over 20 instances in turn: its first minute on them. */
  businessMinuteOver20Instances: { writeUnits: 282, readUnits: 720 },
  /** The same key's next minute on the same instances: each already knows the key's pace, so none counts its first requests one by one. */
  businessSteadyMinuteOver20Instances: { writeUnits: 240, readUnits: 780 },
  /** The same over one instance. */
  businessMinuteOverOneInstance: { writeUnits: 26, readUnits: 975 },
  /** Ten requests, one a minute, after the first of the day. */
  oneRequestAMinute: { writeUnits: 10, readUnits: 0 },
};

/** One factor and routing of the limiter's scale run (test/support/limiter-scale/scale-run.ts, ScaleFigures). */
export interface LimiterScaleRun {
  factor: number;
  routing: string;
  /** `as built`, or `under 1 KB`: the item charged as if constant in size (the model change SCALING.md describes, not built). */
  counterItem: string;
  writeUnitsPerRequest: number;
  readUnitsPerRequest: number;
}

/** What `npm run scale:limiter -- --write` recorded, with the command that produced it. */
export interface LimiterScaleResults {
  command: string;
  assumptions: Record<string, unknown>;
  seed: number;
  warmupSeconds: number;
  measuredSeconds: number;
  runs: LimiterScaleRun[];
}

/** The factors of today's traffic the scale run measures the limiter at. */
export const limiterScaleFactors = [1, 10, 100, 1000] as const;

/**
 * The limiter at 1×, 10×, 100× and 1000× on SCALING.md's plan mix, skewed, over
 * as many function environments as each factor keeps warm, in virtual time
 * (`npm run scale:limiter`, scripts/limiter-scale.ts): one recorded file, the
 * only source of the figures the bill per factor and the rateLimits quota row use.
 */
export const limiterScale: LimiterScaleResults = JSON.parse(
  readFileSync(join(__dirname, '..', 'bench', 'results', 'limiter-scale.json'), 'utf8'),
);

/**
 * The limiter's units per request at a factor the run measured: the costlier
 * of its routings (a claim about the limiter at scale holds for every routing
 * Lambda may use, DESIGN.md), by write units first.
 */
export function limiterScaleUnits(factor: number): { writes: number; reads: number } {
  const runs = limiterScale.runs.filter((run) => run.factor === factor && run.counterItem === 'as built');
  if (runs.length === 0) throw new Error(`bench/results/limiter-scale.json has no run at ${factor}×`);
  const costliest = runs.reduce((worst, run) => (run.writeUnitsPerRequest > worst.writeUnitsPerRequest ? run : worst));
  return { writes: costliest.writeUnitsPerRequest, reads: costliest.readUnitsPerRequest };
}

/** Write units per request at any multiple: between the measured factors, interpolated in log m; outside them, the nearest. */
export function limiterWriteUnitsAt(m: number): number {
  const factors = [...limiterScaleFactors];
  const at = (factor: number) => limiterScaleUnits(factor).writes;
  if (m <= factors[0]!) return at(factors[0]!);
  const upper = factors.findIndex((factor) => factor >= m);
  if (upper < 0) return at(factors.at(-1)!);
  const [low, high] = [factors[upper - 1]!, factors[upper]!];
  const share = Math.log(m / low) / Math.log(high / low);
  return at(low) + share * (at(high) - at(low));
}

/**
 * The limiter's units per request on the rateLimits table, for the quotas and
 * surges below: every key of the model at its full minute over 20 instances
 * (the costlier spread), in its first minute on them (a surge brings new
 * instances, which count their first requests of a key one by one).
 */
export const limiterUnitsPerRequest = {
  write: limiterMeasured.businessMinuteOver20Instances.writeUnits / business.perMinute,
  read: limiterMeasured.businessMinuteOver20Instances.readUnits / business.perMinute,
};

/**
 * The same keys' units per request minute after minute, what the bill charges:
 * the 1× mix is steady traffic, and an instance counts a key's first requests
 * one by one once in its life (hours), not every minute.
 */
const limiterSteadyUnitsPerRequest = {
  write: limiterMeasured.businessSteadyMinuteOver20Instances.writeUnits / business.perMinute,
  read: limiterMeasured.businessSteadyMinuteOver20Instances.readUnits / business.perMinute,
};

export const rps = (m: number) => baselineRps * m;
const creates = (m: number) => rps(m) * assumptions.mix.createPet;
const lists = (m: number) => rps(m) * (assumptions.mix.listAll + assumptions.mix.listByStatus);
/** Concurrent listPets executions: each one an instance with its own caches. */
const listInstances = (m: number) => (lists(m) * assumptions.durationsMs.listPets) / 1000;
const authorizerInvocations = (m: number) => (assumptions.businessKeysAtPeak * m) / authorizer.resultsCacheTtlSeconds;

/**
 * DynamoDB units of an average request of the 1× mix, per table: the
 * per-request table the rows above are built from, and what `npm run cost`
 * charges (scripts/cost-model.ts). Pets: a create writes the item and its two
 * index entries; a getPet reads one item strongly consistent; a list page costs
 * queriesPerPage Queries. The limiter: as measured, minute after minute (limiterMeasured).
 */
export const dynamoUnitsPerRequest = {
  pets: {
    writes: assumptions.mix.createPet * petWriteUnits * 3,
    reads:
      assumptions.mix.getPet * Math.ceil(assumptions.petItemBytes / 4096) +
      (assumptions.mix.listAll + assumptions.mix.listByStatus) * assumptions.queriesPerPage * queryReadUnits(assumptions.pageSize + 1),
  },
  idempotency: { writes: assumptions.mix.createPet * assumptions.idempotentCreateShare * 2, reads: 0 },
  apiKeys: { writes: 0, reads: authorizerInvocations(1) / (baselineRps * 1) },
  rateLimits: { writes: limiterSteadyUnitsPerRequest.write, reads: limiterSteadyUnitsPerRequest.read },
  /** Authorizer invocations per request (cache misses). */
  authorizerInvocations: authorizerInvocations(1) / (baselineRps * 1),
};

function concurrency(m: number, ms: { listPets: number; createPet: number; getPet: number; authorizer: number }): number {
  const { mix } = assumptions;
  return (
    (rps(m) * ((mix.listAll + mix.listByStatus) * ms.listPets + mix.createPet * ms.createPet + mix.getPet * ms.getPet) +
      authorizerInvocations(m) * ms.authorizer) /
    1000
  );
}

/**
 * Reads of one copy of the block counter (one partition each, copies read at
 * random): every list instance reads one when its view of which blocks exist
 * is older than recentViewSeconds and a page of a walk under way reaches the
 * newest pets; and a page of a walk begun since the view (share `fresh` of
 * list pages) reads one.
 */
function counterCopyReads(m: number, fresh = tailPageShare): number {
  const reads = listInstances(m) / recentViewSeconds + lists(m) * fresh;
  return (reads * frontierReadUnitsPerRead) / layout.frontierCopies;
}

/**
 * Reads of the shard holding the newest block, all counted on one shard (the
 * worst case). Pages of walks under way end on views: at most one Query of the
 * block per list instance per recentViewSeconds, fewer when fewer such pages
 * come (`viewShare` of the list pages); `fresh` of the list pages read afresh.
 */
function newestBlockReads(m: number, fresh: number, viewShare = 1, mix: ListMix = listMixes.default): number {
  const viewReads = Math.min(lists(m) * viewShare, listInstances(m) / recentViewSeconds);
  const freshReads = lists(m) * fresh * mix.queriesPerPage;
  return ((viewReads + freshReads) * pageReadUnits(mix)) / newestShards(m);
}

/**
 * Over how many shards those reads spread: the newest block moves on with
 * every reservation (the counter hands out consecutive blocks, on consecutive
 * shards), and instances read their views at their own moments; counted over
 * the blocks handed out in one second (at 1×, one: every read on one shard),
 * at most every shard, the busiest taking shardImbalance times the average.
 */
function newestShards(m: number): number {
  const blocksPerSecond = creates(m) / layout.blockSize;
  return blocksPerSecond <= 1 ? 1 : Math.min(layout.shardCount, blocksPerSecond) / assumptions.shardImbalance;
}

/**
 * The share of list pages reading the newest pets afresh at which a partition
 * binds at `m`×: a copy of the block counter, or the newest block's shard,
 * whichever first; beside the model's last pages of walks under way
 * (tailPageShare, on views), or, `worst`, as many of those as make every list
 * instance read the newest block once per recentViewSeconds.
 */
export function tailShareBindingAt(
  m: number,
  views: 'model' | 'worst' = 'model',
): { share: number; counterCopies: number; newestBlock: number } {
  const viewShare = views === 'model' ? tailPageShare : 1;
  const counterCopies = shareBinding((share) => counterCopyReads(m, share));
  const newestBlock = shareBinding((share) => newestBlockReads(m, share, viewShare));
  return { share: Math.min(counterCopies, newestBlock), counterCopies, newestBlock };
}

/** The share of list pages at which `load` reaches a partition's read units (Infinity: not even at every page). */
function shareBinding(load: (share: number) => number): number {
  if (load(1) < awsLimits.partitionReadUnits) return Number.POSITIVE_INFINITY;
  let low = 0;
  let high = 1;
  for (let step = 0; step < 60; step++) {
    const middle = (low + high) / 2;
    if (load(middle) < awsLimits.partitionReadUnits) low = middle;
    else high = middle;
  }
  return high;
}

/**
 * Next pages on the busiest key of any list index: pages of all pets (the
 * listAll share), of a common status (commonStatusPage), and of a status few
 * pets have (MAX_BLOCKS_PER_PAGE Queries a page, mostly empty, half a unit
 * each), each spread over the index's shards, the busiest taking
 * shardImbalance times the average.
 */
function nextPageReads(m: number, mix: ListMix): number {
  const { mix: shares, firstPageShare, shardImbalance } = assumptions;
  const next = rps(m) * (1 - firstPageShare);
  const rare = (shares.listAll + shares.listByStatus) * mix.rareStatusShare;
  const perKey = (pages: number, units: number) => ((pages * units) / layout.shardCount) * shardImbalance;
  return Math.max(
    perKey(next * shares.listAll, pageReadUnits(mix)),
    perKey(next * Math.max(0, shares.listByStatus - rare), pageReadUnits(commonStatusPage(mix))),
    perKey(next * rare, mix.rareQueriesPerPage * queryReadUnits(0)),
  );
}

/** The list path's rows for a mix of list clients. */
export function listRows(mix: ListMix): Component[] {
  return [
    {
      name: 'id block counter item, writes',
      unit: 'writes',
      limit: awsLimits.partitionWriteUnits,
      kind: 'hard',
      // One reservation a block: at high multiples a block fills in about 12 s, well within its minute.
      load: (m) => creates(m) / layout.blockSize,
    },
    {
      name: 'one copy of the block counter, writes',
      unit: 'writes',
      limit: awsLimits.partitionWriteUnits,
      kind: 'hard',
      // Every reservation writes every copy (a copy already past it still costs its write).
      load: (m) => creates(m) / layout.blockSize,
    },
    {
      name: 'one copy of the block counter, reads (which blocks exist)',
      unit: 'read units',
      limit: awsLimits.partitionReadUnits,
      kind: 'hard',
      load: (m) => counterCopyReads(m),
    },
    {
      name: 'one list shard ("<n>" or "available#<n>"), writes',
      unit: 'writes',
      limit: awsLimits.partitionWriteUnits,
      kind: 'hard',
      // All creates may be `available`: the byStatusShard keys of one status take them all, like byListShard.
      load: (m) => ((creates(m) * petWriteUnits) / layout.shardCount) * assumptions.shardImbalance,
    },
    {
      name: "the first block's shard, reads (first pages)",
      unit: 'read units',
      limit: awsLimits.partitionReadUnits,
      kind: 'hard',
      // A warm instance keeps the sealed first pages for a minute, the least recently used range dropped first: one Query
      // per view (plain and filtered share no key, but pages of 20 and 100 do) per instance per minute.
      load: (m) => (listInstances(m) / sealedCacheSeconds) * 2 * pageReadUnits(mix),
    },
    {
      name: "the newest block's shard, reads (pages reaching the newest pets)",
      unit: 'read units',
      limit: awsLimits.partitionReadUnits,
      kind: 'hard',
      // The model's last pages, every one charged afresh and on views too.
      load: (m) => newestBlockReads(m, tailPageShare, tailPageShare, mix),
    },
    {
      name: "the newest block's shard, reads (walks under way ending there, any number)",
      unit: 'read units',
      limit: awsLimits.partitionReadUnits,
      kind: 'hard',
      // Every list instance reads the newest block once per recentViewSeconds, the most views cost whatever the share.
      load: (m) => newestBlockReads(m, 0, 1, mix),
    },
    {
      name: 'one list shard, reads (next pages)',
      unit: 'read units',
      limit: awsLimits.partitionReadUnits,
      kind: 'hard',
      load: (m) => nextPageReads(m, mix),
    },
  ];
}

/**
 * Every component with a limit, one row each. Other concerns add their rows to
 * this list (push onto it before rendering): the tables, the walls and the
 * first-hard-wall line all come from it.
 */
export const components: Component[] = [
  { name: 'API Gateway, account and region', unit: 'requests', limit: awsLimits.apiGatewayRps, kind: 'soft quota', load: rps },
  {
    name: 'Lambda concurrency, warm durations',
    unit: 'concurrent',
    limit: awsLimits.lambdaConcurrency,
    kind: 'soft quota',
    load: (m) => concurrency(m, assumptions.durationsMs),
  },
  {
    name: 'Lambda concurrency, every request failing (~4.4 s each)',
    unit: 'concurrent',
    limit: awsLimits.lambdaConcurrency,
    kind: 'brownout',
    load: (m) => (rps(m) * assumptions.failedRequestMs) / 1000,
  },
  {
    name: 'rateLimits table, sudden surge',
    unit: 'write units',
    limit: awsLimits.onDemandInstantWriteUnits,
    kind: 'surge',
    // A lease write for a fraction of the requests on fresh instances (limiterMeasured), or the plan mix at m× (limiterScale), the larger.
    load: (m) => rps(m) * Math.max(limiterUnitsPerRequest.write, limiterWriteUnitsAt(m)),
  },
  {
    name: 'rateLimits table, quota',
    unit: 'write units',
    limit: awsLimits.tableQuotaUnits,
    kind: 'soft quota',
    // The plan mix as the scale run measured it at each factor (limiterScale): fan-out makes a request costlier as m grows.
    load: (m) => rps(m) * limiterWriteUnitsAt(m),
  },
  {
    name: "one Business key's counter item, writes",
    unit: 'write units',
    limit: awsLimits.partitionWriteUnits,
    kind: 'hard',
    // m× means more keys, each with its own item: this one's load stays. One key growing: the per-key table.
    load: () => perKeyRps * limiterUnitsPerRequest.write,
    constant: 'per key: see below',
  },
  {
    name: "one Business key's counter item, reads",
    unit: 'read units',
    limit: awsLimits.partitionReadUnits,
    kind: 'hard',
    // The requests served from a lease read the key's state (strongly consistent, one read unit).
    load: () => perKeyRps * limiterUnitsPerRequest.read,
    constant: 'per key: see below',
  },
  {
    name: 'pets table, writes (quota)',
    unit: 'writes',
    limit: awsLimits.tableQuotaUnits,
    kind: 'soft quota',
    load: (m) => creates(m) * petWriteUnits,
  },
  {
    name: 'pets table, reads (quota; getPet strongly consistent)',
    unit: 'read units',
    limit: awsLimits.tableQuotaUnits,
    kind: 'soft quota',
    load: (m) => rps(m) * assumptions.mix.getPet * Math.ceil(assumptions.petItemBytes / 4096),
  },
  ...listRows(listMixes.default),
  {
    name: 'byListShard index, writes (quota)',
    unit: 'writes',
    limit: awsLimits.tableQuotaUnits,
    kind: 'soft quota',
    load: (m) => creates(m) * petWriteUnits,
  },
  {
    name: 'idempotency table, sudden surge',
    unit: 'writes',
    limit: awsLimits.onDemandInstantWriteUnits,
    kind: 'surge',
    load: (m) => creates(m) * assumptions.idempotentCreateShare * 2,
  },
  {
    name: 'idempotency table, quota',
    unit: 'writes',
    limit: awsLimits.tableQuotaUnits,
    kind: 'soft quota',
    load: (m) => creates(m) * assumptions.idempotentCreateShare * 2,
  },
  {
    name: 'apiKeys table (authorizer cache misses)',
    unit: 'read units',
    limit: awsLimits.onDemandInstantReadUnits,
    kind: 'surge',
    load: authorizerInvocations,
  },
];

/** The multiple of today's traffic at which a component reaches its limit. */
export function bindsAt(c: Component): number {
  // Loads grow with m, not all in proportion (views spread over more shards as blocks come faster): search.
  if (c.load(10_000) < c.limit) return 10_000;
  let low = 0;
  let high = 10_000;
  for (let step = 0; step < 60; step++) {
    const middle = (low + high) / 2;
    if (c.load(middle) < c.limit) low = middle;
    else high = middle;
  }
  return high;
}

export interface Wall {
  component: Component;
  multiple: number;
}

/** Every component, with the list rows of `mix` in place of the default mix's. */
export function componentsFor(mix: ListMix): Component[] {
  if (mix.name === 'default') return components;
  const defaultListRows = new Set(listRows(listMixes.default).map((row) => row.name));
  return [...components.filter((c) => !defaultListRows.has(c.name)), ...listRows(mix)];
}

/** Components ordered by the multiple at which growth makes them bind (loads that do not grow, and brownouts, left out). */
export function walls(of: Component[] = components): Wall[] {
  return of
    .filter((c) => c.load(10) > c.load(1) && c.kind !== 'brownout')
    .map((component) => ({ component, multiple: bindsAt(component) }))
    .sort((a, b) => a.multiple - b.multiple);
}

/** The first limit that growth reaches and AWS will not raise: a per-partition limit. */
export function firstHardWall(of: Component[] = components): Wall {
  const hard = walls(of).find((wall) => wall.component.kind === 'hard');
  if (!hard) throw new Error('No hard limit in the model.');
  return hard;
}

export function firstHardWallLine(of: Component[] = components): string {
  const { component, multiple } = firstHardWall(of);
  return `first hard wall: ${times(multiple)} (${component.name}, ${component.limit.toLocaleString('en-US')} ${component.unit} per second)`;
}

/** Quotas AWS raises on request, with the multiple at which to ask (80 % of the default). */
export function raisableQuotas(): { component: Component; askAt: number }[] {
  return walls()
    .filter((wall) => wall.component.kind === 'soft quota')
    .map((wall) => ({ component: wall.component, askAt: wall.multiple * 0.8 }));
}

export interface HotKey {
  rps: number;
  /** Write and read units per second on the key's one counter item, its minute spread evenly. */
  writeUnits: number;
  readUnits: number;
  /** The larger share of a partition's write or read units. */
  share: number;
  /** Write and read units when its whole minute arrives within one second (from 20 or more instances). */
  minuteInOneSecond: { writeUnits: number; readUnits: number };
}

/** The hottest key growing on its own (one customer at m× a Business key's limits): its counter item, units per request as measured over 20 instances. */
export function hotKey(m: number): HotKey {
  const perMinute = business.perMinute * m;
  const rate = perMinute / 60;
  const writeUnits = rate * limiterUnitsPerRequest.write;
  const readUnits = rate * limiterUnitsPerRequest.read;
  return {
    rps: rate,
    writeUnits,
    readUnits,
    share: Math.max(writeUnits / awsLimits.partitionWriteUnits, readUnits / awsLimits.partitionReadUnits),
    minuteInOneSecond: { writeUnits: perMinute * limiterUnitsPerRequest.write, readUnits: perMinute * limiterUnitsPerRequest.read },
  };
}

/** The multiple of a Business key's limits at which its counter item reaches a partition's write or read units, evenly spread. */
export function hotKeyBindsAt(): number {
  return 1 / hotKey(1).share;
}

const number = (value: number): string =>
  value >= 100
    ? Math.round(value).toLocaleString('en-US')
    : value >= 10
      ? value.toFixed(0)
      : value >= 1
        ? value.toFixed(1)
        : value.toFixed(2);
const percent = (value: number): string => {
  const pct = value * 100;
  return pct >= 10 ? `${Math.round(pct).toLocaleString('en-US')} %` : `${Number(pct.toPrecision(2))} %`;
};
const times = (value: number): string => (value >= 10_000 ? 'never' : `${number(value)}×`);

/** The Markdown tables of SCALING.md. */
export function renderCapacityTables(): string {
  const lines: string[] = [];
  lines.push(
    `Today (1×): ${assumptions.businessKeysAtPeak} Business keys at their full ${business.perMinute.toLocaleString('en-US')} requests per minute = ${number(baselineRps)} requests per second; ` +
      `${Object.entries(assumptions.mix)
        .map(([operation, share]) => `${operation} ${Math.round(share * 100)} %`)
        .join(
          ', ',
        )}; pages of ${assumptions.pageSize} pets of ${assumptions.petItemBytes} bytes (${pageReadUnits(listMixes.default)} read units a page); ids in blocks of ${layout.blockSize} from one counter (${layout.frontierCopies} copies read), ${layout.shardCount} shards per list index; ${Math.round(assumptions.firstPageShare * 100)} % first pages, and ${percent(tailPageShare)} reaching the newest pets (lists of at least ${assumptions.listPetsAtLeast.toLocaleString('en-US')} pets); the limiter ${limiterUnitsPerRequest.write.toFixed(3)} write units and ${limiterUnitsPerRequest.read.toFixed(3)} read units per request (a full Business minute over 20 instances, measured); authorizer cache ${authorizer.resultsCacheTtlSeconds} s.`,
    '',
    `| component | limit per second | kind | ${multiples.map((m) => `${m}×`).join(' | ')} | binds at |`,
    `|---|---|---|${multiples.map(() => '---').join('|')}|---|`,
  );
  for (const c of components) {
    const loads = multiples.map((m) => `${number(c.load(m))} (${percent(c.load(m) / c.limit)})`);
    const grows = c.load(10) > c.load(1);
    lines.push(
      `| ${c.name} | ${c.limit.toLocaleString('en-US')} ${c.unit} | ${c.kind} | ${loads.join(' | ')} | ${grows ? times(bindsAt(c)) : (c.constant ?? 'does not grow')} |`,
    );
  }
  lines.push(
    '',
    `| one key at m× a Business key | ${multiples.map((m) => `${m}×`).join(' | ')} | binds at |`,
    `|---|${multiples.map(() => '---').join('|')}|---|`,
  );
  const hot = multiples.map((m) => hotKey(m));
  const partition = `${awsLimits.partitionWriteUnits.toLocaleString('en-US')} write, ${awsLimits.partitionReadUnits.toLocaleString('en-US')} read`;
  const oneSecondBindsAt = Math.min(
    awsLimits.partitionWriteUnits / hotKey(1).minuteInOneSecond.writeUnits,
    awsLimits.partitionReadUnits / hotKey(1).minuteInOneSecond.readUnits,
  );
  lines.push(
    `| requests per second | ${hot.map((h) => number(h.rps)).join(' | ')} | |`,
    `| units per second on its one counter item, its minute spread evenly (limit ${partition}) | ${hot.map((h) => `${number(h.writeUnits)} W, ${number(h.readUnits)} R (${percent(h.share)})`).join(' | ')} | ${times(hotKeyBindsAt())} |`,
    `| units on its item, its whole minute within one second (limit ${partition}) | ${hot.map((h) => `${number(h.minuteInOneSecond.writeUnits)} W, ${number(h.minuteInOneSecond.readUnits)} R`).join(' | ')} | ${times(oneSecondBindsAt)} |`,
  );
  const tail = tailShareBindingAt(1_000);
  const worst = tailShareBindingAt(1_000, 'worst');
  lines.push(
    '',
    `Pages reaching the newest pets: the model takes ${percent(tailPageShare)} of list pages (tailPageShare: a walk over ${assumptions.listPetsAtLeast.toLocaleString('en-US')} pets reaches them once in ${(assumptions.listPetsAtLeast / assumptions.pageSize).toLocaleString('en-US')} pages). ` +
      `Pages of walks under way end on their list instance's view of the newest pets, taken since the walk began and at most ${recentViewSeconds} s old: however many such pages come, an instance reads each newest block at most once per ${recentViewSeconds} s for them (the row "walks under way ending there"; at 1000× the counter hands out ${number(creates(1_000) / layout.blockSize)} blocks a second on consecutive shards, so those reads spread over every shard). ` +
      `Pages of walks begun after the view (a first page that reaches them, as when a list shorter than a page is polled; a walk that got there within seconds of its first page) read afresh: they would bind a partition at 1000× once ${percent(tail.share)} of list pages were such pages, or ${percent(worst.share)} beside views at their worst (the copies of the block counter at ${percent(tail.counterCopies)}, the newest block's shard at ${percent(tail.newestBlock)}). ` +
      `A first page reaches the newest pets only while the list is within one page's ${MAX_BLOCKS_PER_PAGE} blocks (${number(MAX_BLOCKS_PER_PAGE * layout.blockSize)} pets), which 1000× traffic outgrows in ${number((MAX_BLOCKS_PER_PAGE * layout.blockSize) / creates(1_000))} s.`,
  );
  const order = walls().filter((wall) => wall.multiple < 10_000);
  lines.push(
    '',
    `Order in which growth reaches the limits: ${order.map((wall) => `${times(wall.multiple)} ${wall.component.name} (${wall.component.kind})`).join('; ')}.`,
    '',
    `Raisable quotas and when to ask (at 80 % of the limit): ${raisableQuotas()
      .map((q) => `${q.component.name} at ${times(q.askAt)}`)
      .join('; ')}.`,
    '',
    firstHardWallLine(),
  );
  return lines.join('\n');
}

/** The list rows under another mix of list clients, and the first hard wall with them. */
export function renderListMix(mix: ListMix): string {
  const rows = listRows(mix);
  const all = componentsFor(mix);
  return [
    `List clients, ${mix.name} mix: pages of ${mix.pageSize} (${pageReadUnits(mix)} read units a page, ${mix.queriesPerPage} ${mix.queriesPerPage === 1 ? 'Query' : 'Queries'}: a page of a dense list stops at a block's end once ${percent(DENSE_SHARE)} of the ids it read are its pets; a common status's page ${pageReadUnits(commonStatusPage(mix))}, ${commonStatusPage(mix).queriesPerPage} Queries), ${percent(mix.rareStatusShare)} of list pages on a status few pets have (${mix.rareQueriesPerPage} Queries a page); the rest as above.`,
    '',
    `| component | limit per second | kind | ${multiples.map((m) => `${m}×`).join(' | ')} | binds at |`,
    `|---|---|---|${multiples.map(() => '---').join('|')}|---|`,
    ...rows.map((c) => {
      const loads = multiples.map((m) => `${number(c.load(m))} (${percent(c.load(m) / c.limit)})`);
      return `| ${c.name} | ${c.limit.toLocaleString('en-US')} ${c.unit} | ${c.kind} | ${loads.join(' | ')} | ${times(bindsAt(c))} |`;
    }),
    '',
    `${mix.name} mix: ${firstHardWallLine(all)}`,
  ].join('\n');
}

export const BEGIN_MARKER = '<!-- capacity-model:begin (npx tsx scripts/capacity-model.ts --write) -->';
export const ADVERSARIAL_BEGIN_MARKER = '<!-- capacity-model-adversarial:begin (npx tsx scripts/capacity-model.ts --write) -->';
export const ADVERSARIAL_END_MARKER = '<!-- capacity-model-adversarial:end -->';
export const END_MARKER = '<!-- capacity-model:end -->';
export const scalingDocument = join(__dirname, '..', 'SCALING.md');

/** The SCALING.md text with the tables between the markers replaced by `tables`. */
export function withTables(document: string, tables: string, begin_ = BEGIN_MARKER, end_ = END_MARKER): string {
  const begin = document.indexOf(begin_);
  const end = document.indexOf(end_);
  if (begin < 0 || end < begin) throw new Error('SCALING.md lacks the capacity-model markers.');
  return `${document.slice(0, begin + begin_.length)}\n${tables}\n${document.slice(end)}`;
}

if (require.main === module) {
  const at = process.argv.indexOf('--mix');
  const mix = listMixes[(at >= 0 ? process.argv[at + 1] : 'default') as ListMix['name']];
  if (!mix) throw new Error(`--mix must be one of: ${Object.keys(listMixes).join(', ')}`);
  const tables = renderCapacityTables();
  const adversarial = renderListMix(listMixes.adversarial);
  if (process.argv.includes('--write')) {
    const document = withTables(readFileSync(scalingDocument, 'utf8'), tables);
    writeFileSync(scalingDocument, withTables(document, adversarial, ADVERSARIAL_BEGIN_MARKER, ADVERSARIAL_END_MARKER));
    console.log('SCALING.md: capacity tables updated.');
    for (const quota of raisableQuotas())
      console.log(
        `ask for more: ${quota.component.name} (${quota.component.limit.toLocaleString('en-US')} ${quota.component.unit}) at ${times(quota.askAt)}`,
      );
  } else {
    console.log(mix.name === 'default' ? tables : renderListMix(mix));
  }
  console.log(firstHardWallLine(componentsFor(mix)));
}
