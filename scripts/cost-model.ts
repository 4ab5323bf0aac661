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
import { assumptions, dynamoUnitsPerRequest, rps } from './capacity-model';

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
 * Bytes a request leaves in CloudWatch Logs and sends out, from our own
 * lines filled with values of their usual length (see logBytesPerRequest).
 */
const sampleAccessLogLine = JSON.stringify({
  requestId: '3f2a4c1e-7b8d-4e2f-9a6b-1c2d3e4f5a6b',
  extendedRequestId: 'Xy1AbCdEfGhIjKl=',
  requestTime: '1795600000000',
  ip: '203.0.113.17',
  userAgent: 'petstore-client/1.0 node/24',
  httpMethod: 'GET',
  resourcePath: '/pets',
  protocol: 'HTTP/1.1',
  status: '200',
  responseLength: '1712',
  responseLatency: '45',
  integrationLatency: '40',
  integrationStatus: '200',
  authorizerLatency: '-',
  authorizerStatus: '-',
  authorizerError: '-',
  principalId: 'key_0123456789abcdef',
  apiKeyId: 'a1b2c3d4e5',
  errorType: '-',
  errorMessage: '-',
  xrayTraceId: 'Root=1-6543a1b2-0123456789abcdef01234567',
  wafResponseCode: '-',
});
/** The functions' one `request` line (functions/http/api-handler.ts, responseEnvelope) with Powertools Logger's standard keys. */
const sampleFunctionLogLine = JSON.stringify({
  level: 'INFO',
  message: 'request',
  timestamp: '2026-11-25T10:00:00.000Z',
  service: 'petstore',
  sampling_rate: 0,
  xray_trace_id: '1-6543a1b2-0123456789abcdef01234567',
  cold_start: false,
  function_arn: 'arn:aws:lambda:us-east-1:123456789012:function:PetStore-Production-listPets',
  function_memory_size: '512',
  function_name: 'PetStore-Production-listPets',
  function_request_id: '3f2a4c1e-7b8d-4e2f-9a6b-1c2d3e4f5a6b',
  operation: 'listPets',
  requestId: '3f2a4c1e-7b8d-4e2f-9a6b-1c2d3e4f5a6b',
  keyId: 'key_0123456789abcdef',
  statusCode: 200,
  latencyMs: 38,
});
/**
 * The operation's canary metrics line (functions/runtime/metrics.ts, recordAnswer): an
 * embedded-metric-format line per answer, with the version that answered.
 */
const sampleAnswerMetricLine = JSON.stringify({
  _aws: {
    Timestamp: 1795636202361,
    CloudWatchMetrics: [
      {
        Namespace: 'PetStore',
        Dimensions: [
          ['service', 'stage', 'function', 'version'],
          ['service', 'stage', 'function'],
        ],
        Metrics: [{ Name: 'AnswerLatency', Unit: 'Milliseconds' }],
      },
    ],
  },
  service: 'petstore',
  stage: 'production',
  function: 'listPets',
  version: '12',
  AnswerLatency: 38,
});
/** Lambda's own START, END and REPORT lines of an invocation (with X-Ray's segment line). */
const samplePlatformLines = [
  'START RequestId: 3f2a4c1e-7b8d-4e2f-9a6b-1c2d3e4f5a6b Version: $LATEST',
  'END RequestId: 3f2a4c1e-7b8d-4e2f-9a6b-1c2d3e4f5a6b',
  'REPORT RequestId: 3f2a4c1e-7b8d-4e2f-9a6b-1c2d3e4f5a6b\tDuration: 38.12 ms\tBilled Duration: 39 ms\tMemory Size: 512 MB\tMax Memory Used: 98 MB\t',
  'XRAY TraceId: 1-6543a1b2-0123456789abcdef01234567\tSegmentId: 0123456789abcdef\tSampled: true\t',
].join('\n');

/** Bytes of log lines per request: the access log's, the operation function's, its canary metrics and its platform lines. */
export function logBytesPerRequest(): number {
  return [sampleAccessLogLine, sampleFunctionLogLine, sampleAnswerMetricLine, samplePlatformLines].reduce(
    (sum, line) => sum + Buffer.byteLength(line) + 1,
    0,
  );
}

/** A response body's average bytes: a list page of 20 pets, one pet, a created pet, by the mix, plus about 400 bytes of headers. */
function responseBytes(): number {
  const pet = 80;
  const { mix, pageSize } = assumptions;
  return (mix.listAll + mix.listByStatus) * pageSize * pet + (mix.getPet + mix.createPet) * pet + 400;
}

/**
 * X-Ray's default sampling rule: the first request each second and 5 % of the
 * rest are traced ("Sampling rules", https://docs.aws.amazon.com/xray/latest/devguide/xray-console-sampling.html).
 */
function tracedShare(): number {
  const perSecond = rps(1);
  return (1 + 0.05 * (perSecond - 1)) / perSecond;
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

/** The bill of one million requests of the 1× mix. */
export function bill(): BillLine[] {
  const million = 1_000_000;
  const { mix, durationsMs } = assumptions;
  const averageMs =
    (mix.listAll + mix.listByStatus) * durationsMs.listPets + mix.createPet * durationsMs.createPet + mix.getPet * durationsMs.getPet;
  const units = dynamoUnitsPerRequest;
  const dynamo = (writes: number, reads: number) => writes * prices.dynamoWritePerMillion + reads * prices.dynamoReadPerMillion;
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
      dollars: dynamo(units.rateLimits.writes, units.rateLimits.reads),
      limiter: true,
    },
    {
      item: `CloudWatch Logs (${logBytesPerRequest()} bytes a request: access log, function line, canary metrics, platform lines)`,
      dollars: (logBytesPerRequest() / 1e9) * million * prices.logsIngestionPerGb,
    },
    { item: `X-Ray traces (${(tracedShare() * 100).toFixed(1)} % sampled)`, dollars: tracedShare() * prices.xrayTracesPerMillion },
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

export function renderBill(): string {
  const lines = bill();
  const { ours, usagePlansOnly, extraPercent } = totals(lines);
  const width = Math.max(...lines.map((line) => line.item.length));
  return [
    'The 1× mix (scripts/capacity-model.ts), per million requests, us-east-1 list prices (scripts/cost-model.ts cites each page):',
    ...lines.map((line) => `  ${line.item.padEnd(width)}  $${line.dollars.toFixed(4)}`),
    `per million requests: ours $${ours.toFixed(2)}, usage plans only $${usagePlansOnly.toFixed(2)} (+${extraPercent.toFixed(1)} %)`,
  ].join('\n');
}

if (require.main === module) console.log(renderBill());
