/**
 * `npx tsx scripts/capacity-model.ts [--write]`: the capacity model of
 * SCALING.md on paper. For a traffic mix and today's Business plan traffic, it
 * computes the load on every component that has a limit (API Gateway, Lambda
 * concurrency, each DynamoDB partition that one key or index concentrates
 * traffic on) at 1×, 10× and 100×, and the multiple at which each one binds.
 * It prints the tables as Markdown; --write replaces them in SCALING.md. A test
 * (test/infra/capacity-model.test.ts) keeps SCALING.md equal to this output.
 *
 * Nothing here is measured in AWS: the limits are AWS's published defaults and
 * the per-request costs come from the code (functions/data/*). The assumptions
 * are named below; change them and rerun.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PlanLimits, plans } from '../definitions/plans';
import { authorizer } from '../definitions/routes';
import { petLayout } from '../functions/data/pet-layout';

/**
 * AWS's default limits (per account and Region unless said otherwise), each with its source:
 * - API Gateway: "Amazon API Gateway quotas", https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html
 *   (10,000 requests per second per account and Region, raisable).
 * - Lambda: "Lambda quotas", https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 *   (1,000 concurrent executions per Region, raisable).
 * - DynamoDB: "Quotas in Amazon DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
 *   (on-demand: 40,000 read and 40,000 write request units per table, raisable; one partition
 *   serves 3,000 read and 1,000 write units per second, not raisable), and "On-demand capacity
 *   mode", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html
 *   (a new table takes 4,000 writes and 12,000 reads at once; later up to twice its previous peak).
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
  /** Share of list instances whose pages reach the newest pets in a given second (they refresh their view of the blocks each second). */
  tailInstanceShare: 0.1,
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
  /** How much more than its average the busiest shard takes: a shard takes whole blocks, one instance's at a time. */
  shardImbalance: 1.5,
} as const;

/** Ids reserved per allocator write, allocator stripes, shards per list index (functions/data/pet-layout.ts). */
export const layout = petLayout;
/** How long an instance trusts its view of which blocks exist, and keeps sealed ranges (pet-repository.ts). */
const frontierMaxAgeSeconds = 10;
const sealedCacheSeconds = 60;

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
}

const baselineRps = (assumptions.businessKeysAtPeak * business.perMinute) / 60;
const perKeyRps = business.perMinute / 60;

/** Read units of one eventually consistent Query returning `items` pets. */
export function queryReadUnits(items: number): number {
  return Math.ceil((items * assumptions.petItemBytes) / 4096) * 0.5;
}

/** Write units of one pet write (table or index entry). */
const petWriteUnits = Math.ceil(assumptions.petItemBytes / 1024);

/** Writes on a key's counter item per request: one, plus one more at the first request of each minute. */
const counterWritesPerRequest = (rps: number) => 1 + 1 / Math.max(1, rps * 60);

export const rps = (m: number) => baselineRps * m;
const creates = (m: number) => rps(m) * assumptions.mix.createPet;
const lists = (m: number) => rps(m) * (assumptions.mix.listAll + assumptions.mix.listByStatus);
/** Concurrent listPets executions: each one an instance with its own caches. */
const listInstances = (m: number) => (lists(m) * assumptions.durationsMs.listPets) / 1000;
const authorizerInvocations = (m: number) => (assumptions.businessKeysAtPeak * m) / authorizer.resultsCacheTtlSeconds;

function concurrency(m: number, ms: { listPets: number; createPet: number; getPet: number; authorizer: number }): number {
  const { mix } = assumptions;
  return (
    (rps(m) * ((mix.listAll + mix.listByStatus) * ms.listPets + mix.createPet * ms.createPet + mix.getPet * ms.getPet) +
      authorizerInvocations(m) * ms.authorizer) /
    1000
  );
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
    unit: 'writes',
    limit: awsLimits.onDemandInstantWriteUnits,
    kind: 'surge',
    load: (m) => rps(m) * counterWritesPerRequest(perKeyRps),
  },
  {
    name: 'rateLimits table, quota',
    unit: 'writes',
    limit: awsLimits.tableQuotaUnits,
    kind: 'soft quota',
    load: (m) => rps(m) * counterWritesPerRequest(perKeyRps),
  },
  {
    name: "one Business key's counter item",
    unit: 'writes',
    limit: awsLimits.partitionWriteUnits,
    kind: 'hard',
    load: () => perKeyRps * counterWritesPerRequest(perKeyRps),
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
  {
    name: 'byListShard index, writes (quota)',
    unit: 'writes',
    limit: awsLimits.tableQuotaUnits,
    kind: 'soft quota',
    load: (m) => creates(m) * petWriteUnits,
  },
  {
    name: 'id allocator stripe item, writes',
    unit: 'writes',
    limit: awsLimits.partitionWriteUnits,
    kind: 'hard',
    load: (m) => creates(m) / layout.blockSize / layout.stripeCount,
  },
  {
    name: 'id allocator stripe item, reads (which blocks exist)',
    unit: 'read units',
    limit: awsLimits.partitionReadUnits,
    kind: 'hard',
    // Each list instance reads every stripe item (0.5 unit each) once per frontierMaxAge, and each second while its pages reach the newest pets.
    load: (m) => listInstances(m) * (1 / frontierMaxAgeSeconds + assumptions.tailInstanceShare) * 0.5,
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
    // A warm instance keeps the sealed first pages for a minute: one Query per view per instance per minute.
    load: (m) => (listInstances(m) / sealedCacheSeconds) * 2 * queryReadUnits(assumptions.pageSize + 1),
  },
  {
    name: "the newest block's shard, reads (pages reaching the newest pets)",
    unit: 'read units',
    limit: awsLimits.partitionReadUnits,
    kind: 'hard',
    // An instance keeps a range of a block still being filled for 1 s: at most one Query per instance per second.
    load: (m) => listInstances(m) * assumptions.tailInstanceShare * queryReadUnits(assumptions.pageSize + 1),
  },
  {
    name: 'one list shard, reads (next pages)',
    unit: 'read units',
    limit: awsLimits.partitionReadUnits,
    kind: 'hard',
    load: (m) =>
      ((lists(m) * (1 - assumptions.firstPageShare) * assumptions.queriesPerPage * queryReadUnits(assumptions.pageSize + 1)) /
        layout.shardCount) *
      assumptions.shardImbalance,
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
export const bindsAt = (c: Component): number => c.limit / c.load(1);

export interface Wall {
  component: Component;
  multiple: number;
}

/** Components ordered by the multiple at which growth makes them bind (loads that do not grow, and brownouts, left out). */
export function walls(): Wall[] {
  return components
    .filter((c) => c.load(10) > c.load(1) && c.kind !== 'brownout')
    .map((component) => ({ component, multiple: bindsAt(component) }))
    .sort((a, b) => a.multiple - b.multiple);
}

/** The first limit that growth reaches and AWS will not raise: a per-partition limit. */
export function firstHardWall(): Wall {
  const hard = walls().find((wall) => wall.component.kind === 'hard');
  if (!hard) throw new Error('No hard limit in the model.');
  return hard;
}

export function firstHardWallLine(): string {
  const { component, multiple } = firstHardWall();
  return `first hard wall: ${times(multiple)} (${component.name}, ${component.limit.toLocaleString('en-US')} ${component.unit} per second)`;
}

/** Quotas AWS raises on request, with the multiple at which to ask (80 % of the default). */
export function raisableQuotas(): { component: Component; askAt: number }[] {
  return walls()
    .filter((wall) => wall.component.kind === 'soft quota')
    .map((wall) => ({ component: wall.component, askAt: wall.multiple * 0.8 }));
}

/** The hottest key growing on its own (one customer m× a Business key): its counter item and usage plan. */
export function hotKey(m: number): { rps: number; counterWrites: number; share: number } {
  const rps = perKeyRps * m;
  const counterWrites = rps * counterWritesPerRequest(rps);
  return { rps, counterWrites, share: counterWrites / awsLimits.partitionWriteUnits };
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
        )}; pages of ${assumptions.pageSize} pets of ${assumptions.petItemBytes} bytes (${queryReadUnits(assumptions.pageSize + 1)} read units a page); ids in blocks of ${layout.blockSize} on ${layout.stripeCount} allocator stripes, ${layout.shardCount} shards per list index; ${Math.round(assumptions.firstPageShare * 100)} % first pages; authorizer cache ${authorizer.resultsCacheTtlSeconds} s.`,
    '',
    `| component | limit per second | kind | ${multiples.map((m) => `${m}×`).join(' | ')} | binds at |`,
    `|---|---|---|${multiples.map(() => '---').join('|')}|---|`,
  );
  for (const c of components) {
    const loads = multiples.map((m) => `${number(c.load(m))} (${percent(c.load(m) / c.limit)})`);
    const grows = c.load(10) > c.load(1);
    lines.push(
      `| ${c.name} | ${c.limit.toLocaleString('en-US')} ${c.unit} | ${c.kind} | ${loads.join(' | ')} | ${grows ? times(bindsAt(c)) : 'per key: see below'} |`,
    );
  }
  lines.push(
    '',
    `| one key at m× a Business key | ${multiples.map((m) => `${m}×`).join(' | ')} | binds at |`,
    `|---|${multiples.map(() => '---').join('|')}|---|`,
  );
  const hot = multiples.map((m) => hotKey(m));
  lines.push(`| requests per second | ${hot.map((h) => number(h.rps)).join(' | ')} | |`);
  lines.push(
    `| writes on its counter item (limit ${awsLimits.partitionWriteUnits.toLocaleString('en-US')}) | ${hot.map((h) => `${number(h.counterWrites)} (${percent(h.share)})`).join(' | ')} | ${times(awsLimits.partitionWriteUnits / hotKey(1).counterWrites)} |`,
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

export const BEGIN_MARKER = '<!-- capacity-model:begin (npx tsx scripts/capacity-model.ts --write) -->';
export const END_MARKER = '<!-- capacity-model:end -->';
export const scalingDocument = join(__dirname, '..', 'SCALING.md');

/** The SCALING.md text with the tables between the markers replaced by `tables`. */
export function withTables(document: string, tables: string): string {
  const begin = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (begin < 0 || end < begin) throw new Error('SCALING.md lacks the capacity-model markers.');
  return `${document.slice(0, begin + BEGIN_MARKER.length)}\n${tables}\n${document.slice(end)}`;
}

if (require.main === module) {
  const tables = renderCapacityTables();
  if (process.argv.includes('--write')) {
    writeFileSync(scalingDocument, withTables(readFileSync(scalingDocument, 'utf8'), tables));
    console.log('SCALING.md: capacity tables updated.');
    for (const quota of raisableQuotas())
      console.log(
        `ask for more: ${quota.component.name} (${quota.component.limit.toLocaleString('en-US')} ${quota.component.unit}) at ${times(quota.askAt)}`,
      );
    console.log(firstHardWallLine());
  } else {
    console.log(tables);
  }
}
