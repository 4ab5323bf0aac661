/**
 * The bill of the capacity model's 1× mix, per million requests, line by
 * line (`npm run cost`), at AWS list prices for us-east-1 (first tiers, no
 * free tier, no savings plans). DynamoDB units come from the capacity model's
 * per-request table (scripts/capacity-model.ts, dynamoUnitsPerRequest), the
 * limiter's as measured (limiterMeasured). The last line compares with the
 * same service counted by API Gateway usage plans only (no counter of ours):
 * what our exact limits cost on top.
 */
import { lambdaMemoryMb } from '../definitions/lambda-function';
import { businessMetrics } from '../definitions/metrics';
import { accessLogClass, accessLogFormat, xraySampling } from '../definitions/observability';
import { canaryLines } from '../functions/runtime/metrics';
import { assumptions, dynamoUnitsPerRequest, limiterScale, limiterScaleFactors, limiterScaleUnits, rps } from './capacity-model';

export { type LimiterScaleResults, limiterScaleFactors } from './capacity-model';

/** AWS list prices, us-east-1, each with the pricing page it is read from. */
export const prices = {
  /** REST API calls, first 333 million a month, per million ("Amazon API Gateway pricing", https://aws.amazon.com/api-gateway/pricing/). */
  restApiPerMillion: 3.5,
  /** Lambda requests, per million ("AWS Lambda pricing", https://aws.amazon.com/lambda/pricing/). */
  lambdaRequestsPerMillion: 0.2,
  /** Lambda duration on Arm, first 7.5 billion GB-s a month, per GB-second (https://aws.amazon.com/lambda/pricing/). */
  lambdaArmPerGbSecond: 0.0000133334,
  /** DynamoDB on-demand write request units, per million ("Amazon DynamoDB on-demand pricing", https://aws.amazon.com/dynamodb/pricing/on-demand/). */
  dynamoWritePerMillion: 0.625,
  /** DynamoDB on-demand read request units, per million (https://aws.amazon.com/dynamodb/pricing/on-demand/). */
  dynamoReadPerMillion: 0.125,
  /** CloudWatch Logs ingestion (standard class), per GB ("Amazon CloudWatch pricing", https://aws.amazon.com/cloudwatch/pricing/). */
  logsIngestionPerGb: 0.5,
  /** CloudWatch Logs ingestion, Infrequent Access class, per GB (https://aws.amazon.com/cloudwatch/pricing/). */
  logsInfrequentAccessIngestionPerGb: 0.25,
  /** X-Ray traces recorded, per million ("AWS X-Ray pricing", https://aws.amazon.com/xray/pricing/). */
  xrayTracesPerMillion: 5,
  /** AWS WAF requests inspected, per million ("AWS WAF pricing", https://aws.amazon.com/waf/pricing/). */
  wafPerMillionRequests: 0.6,
  /** AWS WAF web ACL, per month (https://aws.amazon.com/waf/pricing/). */
  wafWebAclPerMonth: 5,
  /** AWS WAF rule in a web ACL, per month (https://aws.amazon.com/waf/pricing/). */
  wafRulePerMonth: 1,
  /** Data transfer out to the internet, first 10 TB a month, per GB ("Amazon EC2 On-Demand pricing, Data Transfer", https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer). */
  dataTransferOutPerGb: 0.09,
} as const;

/**
 * What a request of the 1× mix leaves in CloudWatch Logs, line by line, with
 * values of their usual length. test/integration/log-bytes.test.ts runs a
 * handler on DynamoDB Local and renders the synthesized stage's access-log
 * format for that request, and checks these figures against what they write.
 *
 * Not written for a success (definitions/observability.ts, functionLogging):
 * Lambda's START and REPORT lines (system logs at WARN) and the function's
 * `request` line (only answers of 400 and above have one; the 1× mix has none).
 */
export const sampleRequest = {
  /** API Gateway's request id (`x-amzn-RequestId`). */
  requestId: '3f2a4c1e-7b8d-4e2f-9a6b-1c2d3e4f5a6b',
  /** The function's short name, its `function` dimension (businessMetrics.functionEnvVar). */
  functionName: 'listPets',
  /** A published version. */
  version: '12',
  /** The mix's average warm duration, as the function measures its answer (ms). */
  latencyMs: 39,
};

/** The values API Gateway puts in the access log's `$context` variables for that request ("-" where there is none). */
export const sampleAccessLogValues: Record<string, string> = {
  '$context.requestId': sampleRequest.requestId,
  '$context.extendedRequestId': 'Xy1AbCdEfGhIjKl=',
  '$context.identity.sourceIp': '203.0.113.17',
  '$context.httpMethod': 'GET',
  '$context.resourcePath': '/pets',
  '$context.status': '200',
  '$context.responseLatency': '45',
  '$context.authorizer.principalId': 'key_0123456789abcdef',
  '$context.error.responseType': '-',
};

/** An access-log format with its `$context` variables replaced by `values` (each variable must have one). */
export function renderAccessLogLine(format: string, values: Record<string, string>): string {
  return format.replace(/\$context\.[A-Za-z.]+/g, (variable) => {
    const value = values[variable];
    if (value === undefined) throw new Error(`no value for ${variable}`);
    return value;
  });
}

const lineBytes = (line: string) => Buffer.byteLength(line) + 1;

/**
 * Bytes of the operation's canary metric line for the sample request, with its
 * newline (functions/runtime/metrics.ts, canaryLines): one per answer,
 * with the version that answered; a create's also counts the pet created.
 */
export function answerLineBytes(petCreated = false): number {
  const line = canaryLines(
    { stage: 'production', function: sampleRequest.functionName, version: sampleRequest.version },
    businessMetrics.names.answerLatency,
  );
  return lineBytes(line(1795636202361, sampleRequest.latencyMs, { petCreated }));
}

/**
 * Bytes a request leaves in CloudWatch Logs, by log group (each line with its
 * newline), by the 1× mix: what CloudWatch Logs bills as data ingested,
 * uncompressed. The authorizer's metric line, once per cache miss (about 2 in
 * 10,000 requests), is left out.
 */
export function logBytesPerRequest(): { functionLogs: number; accessLog: number } {
  const creates = assumptions.mix.createPet;
  return {
    functionLogs: (1 - creates) * answerLineBytes() + creates * answerLineBytes(true),
    accessLog: lineBytes(renderAccessLogLine(accessLogFormat, sampleAccessLogValues)),
  };
}

/** A response body's average bytes: a list page of 20 pets, one pet, a created pet, by the mix, plus about 400 bytes of headers. */
function responseBytes(): number {
  const pet = 80;
  const { mix, pageSize } = assumptions;
  return (mix.listAll + mix.listByStatus) * pageSize * pet + (mix.getPet + mix.createPet) * pet + 400;
}

/**
 * The stage's X-Ray sampling rule (definitions/observability.ts, xraySampling): the
 * reservoir's requests each second and the fixed rate of the rest are traced
 * ("Configure sampling rules", https://docs.aws.amazon.com/xray/latest/devguide/xray-console-sampling.html).
 */
export function tracedShare(): number {
  const perSecond = rps(1);
  const { reservoirPerSecond, fixedRate } = xraySampling;
  return (reservoirPerSecond + fixedRate * (perSecond - reservoirPerSecond)) / perSecond;
}

/** The web ACL's rules on every stage (lib/constructs/api-firewall.ts): body size and per-key rate. */
const WAF_RULES = 2;

/** WAF per million requests: the inspection charge, and the web ACL's and its rules' monthly charges spread over a month of the 1× mix. */
function wafPerMillion(): number {
  const millionsPerMonth = (rps(1) * 30 * 86_400) / 1_000_000;
  return prices.wafPerMillionRequests + (prices.wafWebAclPerMonth + WAF_RULES * prices.wafRulePerMonth) / millionsPerMonth;
}

/** What one limiter call adds to a createPet (one DynamoDB round trip in the region). */
const LIMITER_CALL_MS = 8;

export interface BillLine {
  item: string;
  /** Dollars per million requests. */
  dollars: number;
  /** Part of our own limiter: left out of the usage-plans-only bill. */
  limiter?: boolean;
}

/** The limiter's DynamoDB units per request on the rateLimits table. */
export interface LimiterUnits {
  writes: number;
  reads: number;
}

/**
 * The bill of one million requests of the 1× mix; the limiter's units as
 * measured minute after minute for the capacity model's 1× (60 Business keys
 * at their full minute), or `limiter`'s (the scale run's at a factor: billAtFactors).
 */
export function bill(limiter: LimiterUnits = dynamoUnitsPerRequest.rateLimits): BillLine[] {
  const million = 1_000_000;
  const { mix, durationsMs } = assumptions;
  const averageMs =
    (mix.listAll + mix.listByStatus) * durationsMs.listPets + mix.createPet * durationsMs.createPet + mix.getPet * durationsMs.getPet;
  const units = dynamoUnitsPerRequest;
  const dynamo = (writes: number, reads: number) => writes * prices.dynamoWritePerMillion + reads * prices.dynamoReadPerMillion;
  const logs = logBytesPerRequest();
  return [
    { item: 'API Gateway REST API calls', dollars: prices.restApiPerMillion },
    { item: `AWS WAF (every request inspected; web ACL and ${WAF_RULES} rules a month)`, dollars: wafPerMillion() },
    {
      item: 'Lambda requests (one operation invocation each; authorizer calls on cache misses)',
      dollars: prices.lambdaRequestsPerMillion * (1 + units.authorizerInvocations),
    },
    {
      item: `Lambda duration (${averageMs} ms average, ${lambdaMemoryMb} MB, arm64)`,
      dollars: (((averageMs / 1000) * lambdaMemoryMb) / 1024) * million * prices.lambdaArmPerGbSecond,
    },
    {
      // createPet waits for the limiter's call (a DynamoDB call of 5 to 10 ms: assumptions.durationsMs); the reads overlap it.
      item: `Lambda duration of the limiter's call in createPet (${LIMITER_CALL_MS} ms)`,
      dollars: (((mix.createPet * LIMITER_CALL_MS) / 1000) * lambdaMemoryMb * million * prices.lambdaArmPerGbSecond) / 1024,
      limiter: true,
    },
    { item: 'DynamoDB pets table and its two indexes', dollars: dynamo(units.pets.writes, units.pets.reads) },
    { item: 'DynamoDB idempotency table', dollars: dynamo(units.idempotency.writes, units.idempotency.reads) },
    { item: 'DynamoDB apiKeys table (authorizer cache misses)', dollars: dynamo(units.apiKeys.writes, units.apiKeys.reads) },
    {
      item: 'DynamoDB rateLimits table (the limiter: leases and key-state reads)',
      dollars: dynamo(limiter.writes, limiter.reads),
      limiter: true,
    },
    {
      item: `CloudWatch Logs, functions (${Math.round(logs.functionLogs)} bytes a request: the canary's metric line, with PetsCreated on a create; Standard class)`,
      dollars: (logs.functionLogs / 1e9) * million * prices.logsIngestionPerGb,
    },
    {
      item: `CloudWatch Logs, access log (${logs.accessLog} bytes a request: finds a request by its id, ${accessLogClass === 'STANDARD' ? 'Standard' : 'Infrequent Access'} class)`,
      dollars:
        (logs.accessLog / 1e9) *
        million *
        (accessLogClass === 'STANDARD' ? prices.logsIngestionPerGb : prices.logsInfrequentAccessIngestionPerGb),
    },
    {
      item: `X-Ray traces (${(tracedShare() * 100).toFixed(1)} % sampled: ${xraySampling.reservoirPerSecond} a second)`,
      dollars: tracedShare() * prices.xrayTracesPerMillion,
    },
    {
      item: `Data transfer out (${Math.round(responseBytes())} bytes a response)`,
      dollars: (responseBytes() / 1e9) * million * prices.dataTransferOutPerGb,
    },
  ];
}

/** The totals: ours, and the same service with usage plans only (no limiter of ours). */
export function totals(lines: BillLine[] = bill()): { ours: number; usagePlansOnly: number; extraPercent: number } {
  const ours = lines.reduce((sum, line) => sum + line.dollars, 0);
  const usagePlansOnly = lines.filter((line) => !line.limiter).reduce((sum, line) => sum + line.dollars, 0);
  return { ours, usagePlansOnly, extraPercent: ((ours - usagePlansOnly) / usagePlansOnly) * 100 };
}

/** The totals with the limiter's units replaced by `limiter`. */
export const totalsAt = (limiter: LimiterUnits) => totals(bill(limiter));

export interface FactorBill extends LimiterUnits {
  factor: number;
  ours: number;
  usagePlansOnly: number;
  extraPercent: number;
}

/**
 * The bill per million requests at 1×, 10×, 100× and 1000×, the limiter's units
 * from the scale run at each factor (bench/results/limiter-scale.json, the
 * costlier routing: limiterScaleUnits); every other line as at 1× (list prices
 * of first tiers: volume tiers would lower the rest, not the limiter's share).
 */
export function billAtFactors(): FactorBill[] {
  return limiterScaleFactors.map((factor) => {
    const units = limiterScaleUnits(factor);
    return { factor, ...units, ...totalsAt(units) };
  });
}

/** One line per factor: the limiter's units and the bill beside usage plans only (README and SCALING.md quote them). */
export function factorBillLines(): string[] {
  return billAtFactors().map(
    (row) =>
      `${`${row.factor}×`.padStart(5)}: ${row.writes.toFixed(3)} write and ${row.reads.toFixed(3)} read units a request: ours $${row.ours.toFixed(2)}, usage plans only $${row.usagePlansOnly.toFixed(2)} (+${row.extraPercent.toFixed(1)} %)`,
  );
}

export function renderBill(): string {
  const lines = bill();
  const { ours, usagePlansOnly, extraPercent } = totals(lines);
  const width = Math.max(...lines.map((line) => line.item.length));
  return [
    'The 1× mix (scripts/capacity-model.ts), per million requests, us-east-1 list prices (scripts/cost-model.ts cites each page):',
    ...lines.map((line) => `  ${line.item.padEnd(width)}  $${line.dollars.toFixed(4)}`),
    `The same bill with the limiter as measured on SCALING.md's plan mix at each factor (\`${limiterScale.command}\`, bench/results/limiter-scale.json; the costlier routing; the other lines as above):`,
    ...factorBillLines().map((line) => `  ${line}`),
    `per million requests of the capacity model's 1× (60 Business keys at their full minute): ours $${ours.toFixed(2)}, usage plans only $${usagePlansOnly.toFixed(2)} (+${extraPercent.toFixed(1)} %)`,
  ].join('\n');
}

if (require.main === module) console.log(renderBill());
