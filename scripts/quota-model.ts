/**
 * `npx tsx scripts/quota-model.ts [--write]`: the account quotas of SCALING.md
 * ("Customers and account quotas") on paper. Growth here means more customers:
 * at m×, m times each stage's customer mix (lib/stage-config.ts) and m times
 * the Enterprise customers assumed below. For each quota it gives the load at
 * 1×, 10×, 100× and 1000× and the multiple at which it binds, and lists the
 * quotas AWS raises on request apart from those it never raises. --write
 * replaces the tables between this script's markers in SCALING.md (run by
 * `npm run capacity`, before scripts/capacity-model.ts, whose first-hard-wall
 * line ends the output); a test keeps the two equal.
 *
 * The quotas are AWS's published defaults: "Amazon API Gateway quotas"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html),
 * "Quotas for configuring and running a REST API in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html)
 * and "Lambda quotas" (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PooledPlan } from '../definitions/metering-pool';
import { plans } from '../definitions/plans';
import { pooledUsagePlan } from '../definitions/usage-plan-limits';
import {
  LAMBDA_UNRESERVED_MINIMUM,
  pooledKeysKept,
  requiredLambdaConcurrencyQuota,
  type StageConfig,
  stageNames,
  stages,
} from '../lib/stage-config';

export const accountQuotas = {
  /** API keys per account and Region, both stages together. Cannot be increased. */
  apiKeys: 10_000,
  /** Usage plans per account and Region. Raisable. */
  usagePlans: 300,
  /** API Gateway throttle per account and Region, requests per second. Raisable; its burst follows (AWS sets it). */
  apiGatewayRps: 10_000,
  /** The same in 13 Regions (Cape Town, Milan, Jakarta, UAE, Hyderabad, Melbourne, Spain, Zurich, Tel Aviv, Calgary, Malaysia, Thailand, Mexico). */
  apiGatewayRpsSmallRegions: 2_500,
  /** Lambda concurrent executions per account and Region. Raisable (new accounts may start lower). */
  lambdaConcurrency: 1_000,
} as const;

/** Enterprise customers at 1× (the production mix has none of its own: each takes an API key and a usage plan). */
export const enterpriseCustomersAtBaseline = 5;

export const quotaMultiples = [1, 10, 100, 1000] as const;

const all = stageNames.map((stage) => stages[stage]);
/** Growth is production's: staging keeps its test keys. */
const staging = stages.staging;
const production = stages.production;
const pooledKeys = (config: StageConfig) => pooledKeysKept(config) * Object.keys(config.customers).length;

/** Requests per second the stage's customers may send under their contracts, all at their per-minute limit. */
export function contractRps(config: StageConfig): number {
  return (Object.entries(config.customers) as [PooledPlan, number][]).reduce((sum, [plan, count]) => {
    const limits = plans[plan].limits;
    return limits === 'custom' ? sum : sum + (count * limits.perMinute) / 60;
  }, 0);
}

export interface QuotaRow {
  name: string;
  limit: number;
  unit: string;
  raisable: boolean;
  load: (m: number) => number;
  note: string;
}

/** The rows: what both stages together take of each account quota at m× the customers. */
export function quotaRows(): QuotaRow[] {
  const fixedPlanCount = Object.keys(stages.production.customers).length;
  return [
    {
      name: 'API Gateway API keys',
      limit: accountQuotas.apiKeys,
      unit: 'keys',
      raisable: false,
      load: (m) => all.reduce((sum, config) => sum + pooledKeys(config), 0) + enterpriseCustomersAtBaseline * m,
      note: `pooled keys (${all.map((c) => `${c.stage} ${pooledKeys(c)}`).join(', ')}) whatever the number of Free, Pro and Business customers, plus one per Enterprise customer`,
    },
    {
      name: 'API Gateway usage plans',
      limit: accountQuotas.usagePlans,
      unit: 'plans',
      raisable: true,
      load: (m) => all.length * fixedPlanCount + enterpriseCustomersAtBaseline * m,
      note: `${fixedPlanCount} per stage, the pooled keys' (metering only: ${pooledPlanLimits()}), plus one per Enterprise customer (its own contract's limits, spent by it alone)`,
    },
    {
      name: 'API Gateway throttle, account and Region',
      limit: accountQuotas.apiGatewayRps,
      unit: 'requests/s',
      raisable: true,
      load: (m) => contractRps(staging) + contractRps(production) * m,
      note: `what the customers of both stages may send under their contracts (production's grow, staging's stay); ${accountQuotas.apiGatewayRpsSmallRegions.toLocaleString('en-US')} by default in 13 Regions, reached at ${times((accountQuotas.apiGatewayRpsSmallRegions - contractRps(staging)) / contractRps(production))}`,
    },
    {
      name: 'Lambda concurrency, reservations',
      limit: accountQuotas.lambdaConcurrency,
      unit: 'concurrent',
      raisable: true,
      load: () => requiredLambdaConcurrencyQuota(all),
      note: `the authorizers' reserved concurrency (${all.map((c) => `${c.stage} ${c.authorizerReservedConcurrency}`).join(', ')}), reserved only where the deployment declares the account's quota (-c <stage>LambdaConcurrencyQuota), plus the ${LAMBDA_UNRESERVED_MINIMUM} Lambda keeps unreserved; the operations' share grows with traffic (table above)`,
    },
  ];
}

/** The multiple of today's customers at which a row reaches its quota (Infinity if it does not grow). */
export function quotaBindsAt(row: QuotaRow): number {
  const fixed = row.load(0);
  const perMultiple = row.load(1) - fixed;
  if (perMultiple <= 0) return fixed >= row.limit ? 0 : Number.POSITIVE_INFINITY;
  return (row.limit - fixed) / perMultiple;
}

/** What a pooled key's usage plan limits, in words: nothing that one customer could use up for the others. */
export function pooledPlanLimits(): string {
  const limits = [pooledUsagePlan.throttle && 'a throttle', pooledUsagePlan.quota && 'a daily quota'].filter(Boolean);
  return limits.length === 0 ? 'no throttle, no quota' : `${limits.join(' and ')} shared by every customer on the key`;
}

/** The production stage throttle at m×: derived from m× the mix, so the load (what its customers may send) is a fixed share of it. */
export function stageThrottleShare(): number {
  return contractRps(stages.production) / stages.production.throttle.rateLimit;
}

const whole = (value: number) => Math.round(value).toLocaleString('en-US');
function times(value: number): string {
  return value === Number.POSITIVE_INFINITY ? 'never' : `${value >= 100 ? whole(value) : Number(value.toPrecision(2))}×`;
}
const percent = (value: number) => `${Number((value * 100).toPrecision(2))} %`;

export function renderQuotaTables(): string {
  const mix = (config: StageConfig) =>
    (Object.entries(config.customers) as [PooledPlan, number][]).map(([plan, count]) => `${count} ${plans[plan].displayName}`).join(', ');
  const rows = quotaRows();
  const lines = [
    `1× is each stage's customer mix (lib/stage-config.ts: production ${mix(stages.production)}; staging ${mix(stages.staging)}) and ${enterpriseCustomersAtBaseline} Enterprise customers; m× is m times as many customers of every plan.`,
    '',
    `| quota (account and Region, both stages) | limit | raisable | ${quotaMultiples.map((m) => `${m}×`).join(' | ')} | binds at | counts |`,
    `|---|---|---|${quotaMultiples.map(() => '---').join('|')}|---|---|`,
  ];
  for (const row of rows) {
    const loads = quotaMultiples.map((m) => `${whole(row.load(m))} (${percent(row.load(m) / row.limit)})`);
    lines.push(
      `| ${row.name} | ${row.limit.toLocaleString('en-US')} ${row.unit} | ${row.raisable ? 'yes' : 'no'} | ${loads.join(' | ')} | ${times(quotaBindsAt(row))} | ${row.note} |`,
    );
  }
  const throttle = stages.production.throttle;
  lines.push(
    `| production stage throttle (ours) | ${whole(throttle.rateLimit)} requests/s at 1×, burst ${whole(throttle.burstLimit)} | derived | ${quotaMultiples.map(() => percent(stageThrottleShare())).join(' | ')} | never | derived from the customer mix: m× the customers, m× the throttle; its burst is capped by the account's (5,000 at the default rate, SCALING.md, API Gateway). Shared by every customer: one key's flood spends it unless WAF's per-key rule stops that key (SCALING.md, "One customer's flood") |`,
  );
  const raisable = rows.filter((row) => row.raisable).sort((a, b) => quotaBindsAt(a) - quotaBindsAt(b));
  const reached = (row: QuotaRow) =>
    quotaBindsAt(row) === Number.POSITIVE_INFINITY ? `needs ${whole(row.load(1))} from the start` : `at ${times(quotaBindsAt(row))}`;
  lines.push(
    '',
    `Quotas AWS raises on request, in the order growth reaches them: ${raisable.map((row) => `${row.name} (${row.limit.toLocaleString('en-US')}, ${reached(row)})`).join('; ')}.`,
    `Quotas AWS never raises: ${rows
      .filter((row) => !row.raisable)
      .map((row) => `${row.name} (${row.limit.toLocaleString('en-US')}, at ${times(quotaBindsAt(row))})`)
      .join('; ')}.`,
  );
  return lines.join('\n');
}

export const QUOTA_BEGIN_MARKER = '<!-- quota-model:begin (npx tsx scripts/quota-model.ts --write) -->';
export const QUOTA_END_MARKER = '<!-- quota-model:end -->';
export const scalingDocumentPath = join(__dirname, '..', 'SCALING.md');

export function withQuotaTables(document: string, tables: string): string {
  const begin = document.indexOf(QUOTA_BEGIN_MARKER);
  const end = document.indexOf(QUOTA_END_MARKER);
  if (begin < 0 || end < begin) throw new Error('SCALING.md lacks the quota-model markers.');
  return `${document.slice(0, begin + QUOTA_BEGIN_MARKER.length)}\n${tables}\n${document.slice(end)}`;
}

if (require.main === module) {
  const tables = renderQuotaTables();
  console.log(tables);
  if (process.argv.includes('--write')) {
    writeFileSync(scalingDocumentPath, withQuotaTables(readFileSync(scalingDocumentPath, 'utf8'), tables));
    console.log('SCALING.md: quota tables updated.');
  }
}
