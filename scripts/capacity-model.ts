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
import { IdAllocator } from '../functions/domain/id-allocator';

/** AWS's default limits (per account and region unless said otherwise). */
export const awsLimits = {
  /** API Gateway REST: requests per second across all APIs of the account and region (soft quota). */
  apiGatewayRps: 10_000,
  /** Lambda concurrent executions per region (soft quota). */
  lambdaConcurrency: 1_000,
  /** One DynamoDB partition (so one partition key value, or one index key value): writes of up to 1 KB per second. */
  partitionWriteUnits: 1_000,
  /** One DynamoDB partition: read units per second (an eventually consistent read of 4 KB costs 0.5). */
  partitionReadUnits: 3_000,
  /** On-demand: what a table takes at once without having seen it before (twice its previous peak, at least this). */
  onDemandInstantWriteUnits: 4_000,
  onDemandInstantReadUnits: 12_000,
  /** On-demand: per-table maximum (soft quota), reads and writes each. */
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
  /** Average size of a pet item in the indexes (all attributes projected), in bytes. */
  petItemBytes: 150,
  /** Share of creates that send an Idempotency-Key (two writes to the idempotency table each). */
  idempotentCreateShare: 1,
  /** Warm Lambda durations in ms: DynamoDB calls of 5 to 10 ms in the region plus our own work. */
  durationsMs: { listPets: 40, createPet: 60, getPet: 30, authorizer: 20 },
  /** DynamoDB calls on the request path (authorizer aside): counter + read, or counter + allocator share + put + idempotency record. */
  dynamoCallsPerRequest: { listPets: 2, createPet: 4, getPet: 2 },
  /** When DynamoDB browns out, each call waits its request timeout (functions/runtime/dependencies.ts). */
  slowDynamoCallMs: 1_000,
} as const;

/** Ids reserved per allocator write (the default of functions/domain/id-allocator.ts). */
export const idBlockSize = new IdAllocator(() => Promise.resolve(1)).blockSize;

export const multiples = [1, 10, 100] as const;

/**
 * hard: a per-partition limit no quota request raises; soft quota: AWS raises
 * it on request; surge: on-demand tables take twice their previous peak at once
 * and adapt within about 30 minutes (or sooner with warm throughput); brownout:
 * not growth but a failure mode at today's traffic.
 */
type Kind = 'hard' | 'soft quota' | 'surge' | 'brownout';

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

/** Writes on a key's counter item per request: one, plus one more at the first request of each minute. */
const counterWritesPerRequest = (rps: number) => 1 + 1 / Math.max(1, rps * 60);

function components(): Component[] {
  const { mix, durationsMs } = assumptions;
  const rps = (m: number) => baselineRps * m;
  const creates = (m: number) => rps(m) * mix.createPet;
  const pageUnits = queryReadUnits(assumptions.pageSize + 1);
  // Growth by more keys: each key's authorizer answer is cached for the TTL.
  const authorizerInvocations = (m: number) => (assumptions.businessKeysAtPeak * m) / authorizer.resultsCacheTtlSeconds;
  const concurrency = (m: number, ms: { listPets: number; createPet: number; getPet: number; authorizer: number }) =>
    (rps(m) * ((mix.listAll + mix.listByStatus) * ms.listPets + mix.createPet * ms.createPet + mix.getPet * ms.getPet) +
      authorizerInvocations(m) * ms.authorizer) /
    1000;
  const slow = assumptions.slowDynamoCallMs;
  const calls = assumptions.dynamoCallsPerRequest;
  const brownoutMs = {
    listPets: durationsMs.listPets + calls.listPets * slow,
    createPet: durationsMs.createPet + calls.createPet * slow,
    getPet: durationsMs.getPet + calls.getPet * slow,
    authorizer: durationsMs.authorizer + slow,
  };
  return [
    { name: 'API Gateway, account and region', unit: 'requests', limit: awsLimits.apiGatewayRps, kind: 'soft quota', load: rps },
    {
      name: 'Lambda concurrency, warm durations',
      unit: 'concurrent',
      limit: awsLimits.lambdaConcurrency,
      kind: 'soft quota',
      load: (m) => concurrency(m, durationsMs),
    },
    {
      name: 'Lambda concurrency, DynamoDB at 1 s per call',
      unit: 'concurrent',
      limit: awsLimits.lambdaConcurrency,
      kind: 'brownout',
      load: (m) => concurrency(m, brownoutMs),
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
      name: 'id allocator item',
      unit: 'writes',
      limit: awsLimits.partitionWriteUnits,
      kind: 'hard',
      load: (m) => creates(m) / idBlockSize,
    },
    { name: 'byList partition ("pets"), writes', unit: 'writes', limit: awsLimits.partitionWriteUnits, kind: 'hard', load: creates },
    {
      name: 'byList partition ("pets"), reads',
      unit: 'read units',
      limit: awsLimits.partitionReadUnits,
      kind: 'hard',
      load: (m) => rps(m) * mix.listAll * pageUnits,
    },
    { name: 'byStatus partition "available", writes', unit: 'writes', limit: awsLimits.partitionWriteUnits, kind: 'hard', load: creates },
    {
      name: 'byStatus partition "available", reads',
      unit: 'read units',
      limit: awsLimits.partitionReadUnits,
      kind: 'hard',
      load: (m) => rps(m) * mix.listByStatus * pageUnits,
    },
    {
      name: 'idempotency table, sudden surge',
      unit: 'writes',
      limit: awsLimits.onDemandInstantWriteUnits,
      kind: 'surge',
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
}

/** The multiple of today's traffic at which a component reaches its limit. */
export const bindsAt = (c: Component): number => c.limit / c.load(1);

export interface Wall {
  component: Component;
  multiple: number;
}

/** Components ordered by the multiple at which growth makes them bind (loads that do not grow, and brownouts, left out). */
export function walls(): Wall[] {
  return components()
    .filter((c) => c.load(10) > c.load(1) && c.kind !== 'brownout')
    .map((component) => ({ component, multiple: bindsAt(component) }))
    .sort((a, b) => a.multiple - b.multiple);
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
        )}; pages of ${assumptions.pageSize} pets of ${assumptions.petItemBytes} bytes (${queryReadUnits(assumptions.pageSize + 1)} read units a page); ids in blocks of ${idBlockSize}; authorizer cache ${authorizer.resultsCacheTtlSeconds} s.`,
    '',
    `| component | limit per second | kind | ${multiples.map((m) => `${m}×`).join(' | ')} | binds at |`,
    `|---|---|---|${multiples.map(() => '---').join('|')}|---|`,
  );
  for (const c of components()) {
    const loads = multiples.map((m) => `${number(c.load(m))} (${percent(c.load(m) / c.limit)})`);
    const grows = c.load(10) > c.load(1);
    lines.push(
      `| ${c.name} | ${c.limit.toLocaleString('en-US')} ${c.unit} | ${c.kind} | ${loads.join(' | ')} | ${grows ? times(bindsAt(c)) : 'per key: see below'} |`,
    );
  }
  lines.push('', '| one key at m× a Business key | 1× | 10× | 100× | binds at |', '|---|---|---|---|---|');
  const hot = multiples.map((m) => hotKey(m));
  lines.push(`| requests per second | ${hot.map((h) => number(h.rps)).join(' | ')} | |`);
  lines.push(
    `| writes on its counter item (limit ${awsLimits.partitionWriteUnits.toLocaleString('en-US')}) | ${hot.map((h) => `${number(h.counterWrites)} (${percent(h.share)})`).join(' | ')} | ${times(awsLimits.partitionWriteUnits / hotKey(1).counterWrites)} |`,
  );
  const order = walls().filter((wall) => wall.multiple < 10_000);
  const hard = order.find((wall) => wall.component.kind === 'hard')!;
  lines.push(
    '',
    `Order in which growth reaches the limits: ${order.map((wall) => `${times(wall.multiple)} ${wall.component.name} (${wall.component.kind})`).join('; ')}.`,
    '',
    `First hard limit: ${hard.component.name}, ${hard.component.limit.toLocaleString('en-US')} ${hard.component.unit} per second, at ${times(hard.multiple)} today's traffic.`,
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
  } else {
    console.log(tables);
  }
}
