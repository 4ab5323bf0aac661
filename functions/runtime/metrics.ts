import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { isDeploymentCheck } from '../../definitions/deployment-check';
import { businessMetrics } from '../../definitions/metrics';
import type { PlanName } from '../../definitions/plans';

/**
 * A Metrics instance writing CloudWatch embedded-metric-format lines on stdout
 * (Powertools for AWS Lambda): namespace PetStore, dimensions service=petstore
 * and the stage (when the stack sets it: stageDimensions). The business
 * metrics; the canary lines are written by canaryLines.
 */
export function buildMetrics(env: NodeJS.ProcessEnv = process.env): Metrics {
  return new Metrics({
    namespace: businessMetrics.namespace,
    serviceName: env.POWERTOOLS_SERVICE_NAME ?? businessMetrics.serviceName,
    defaultDimensions: stageDimensions(env),
  });
}

/**
 * The instance, built at its first metric, not at import, so no container pays
 * for building it during its cold start. Off locally and in tests
 * (POWERTOOLS_METRICS_DISABLED), where nobody collects them.
 */
function builtAtFirstUse(): Metrics {
  let instance: Metrics | undefined;
  const metrics = new Proxy({} as Metrics, {
    get(_target, property) {
      instance ??= buildMetrics();
      const value: unknown = Reflect.get(instance, property, instance);
      return typeof value === 'function' ? value.bind(instance) : value;
    },
  });
  return metrics;
}

/** Business metrics: the dashboard and the 429 alarms read these names. */
export const metrics: Metrics = builtAtFirstUse();

/** The function's `function` dimension (businessMetrics.functionEnvVar, which the stack and the local runtime set). */
function functionNameOf(env: NodeJS.ProcessEnv): string {
  return env[businessMetrics.functionEnvVar] ?? 'local';
}

/** The `stage` dimension every business metric carries, from the environment the stack gives each function. */
export function stageDimensions(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const stage = env[businessMetrics.stageEnvVar];
  return stage ? { stage } : {};
}

export const metricNames = businessMetrics.names;

/** Counts what a response says about the product: 4xx by code, 429 by plan; nothing for the deployment check's key. */
export function recordResponse(
  target: Metrics,
  response: { statusCode: number; body?: string },
  caller: { plan: PlanName; keyId: string } | undefined,
): void {
  if (response.statusCode < 400 || response.statusCode >= 500 || isDeploymentCheck(caller?.keyId)) return;
  const plan = caller?.plan;
  const code = errorCodeOf(response.body);
  target.singleMetric().addDimension('code', code).addMetric(metricNames.clientErrors, MetricUnit.Count, 1);
  if (response.statusCode === 429) {
    target
      .singleMetric()
      .addDimension('plan', plan ?? 'unknown')
      .addMetric(metricNames.rateLimited, MetricUnit.Count, 1);
  }
}

/** Set by a request that created a customer's pet; its answer's line (recordAnswer) carries PetsCreated and clears it. */
let petCreatedPending = false;

/** A pet created for a customer (the deployment check's pets are not the product's): counted in this answer's line. */
export function recordPetCreated(keyId: string): void {
  if (!isDeploymentCheck(keyId)) petCreatedPending = true;
}

/** A canary metric that times each call: an operation's answer, the authorizer's key check. */
export type CanaryLatency = typeof metricNames.answerLatency | typeof metricNames.keyCheckLatency;

/**
 * What a call adds to its latency sample, if anything: a 500 (our bug) or a
 * 503 (a dependency failed) of an operation; a key the authorizer refused or
 * could not check.
 */
export type CanaryCount =
  | typeof metricNames.serverErrors
  | typeof metricNames.unavailable
  | typeof metricNames.keysRefused
  | typeof metricNames.keyStoreFailures;

/** What names an instance's calls in its canary line: the stage, the function, the version that answered. */
export interface CanaryLineSource {
  stage?: string;
  function: string;
  version: string;
}

/** What a call's line says besides its latency: what it counts, and whether it created a customer's pet. */
export interface CanaryOutcome {
  count?: CanaryCount;
  petCreated?: boolean;
}

/**
 * A function's canary lines, one embedded-metric-format line per call
 * ("Specification: Embedded metric format",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * its metrics extracted twice (Dimensions is "an array of DimensionSet
 * arrays"), with the version that answered (the new version's own series) and
 * without it (the function across its versions: the rollback alarms get the
 * old version's series by subtracting); for a created pet, a second directive
 * with the business dimensions (service, stage), so PetsCreated needs no line
 * of its own ("CloudWatchMetrics": an array of MetricDirective objects, each
 * with its own Dimensions, all reading the root's members). Built by hand from
 * parts made once per source, because every call writes one: Powertools'
 * per-metric checks and environment reads were about a third of the warm
 * path's own time. The bill (scripts/cost-model.ts) charges these bytes.
 */
export function canaryLines(
  source: CanaryLineSource,
  latency: CanaryLatency,
): (timestampMs: number, latencyMs: number, outcome?: CanaryOutcome) => string {
  const around = canaryLineParts(source, latency);
  const parts = new Map<string, [string, string]>();
  return (timestampMs, latencyMs, outcome = {}) => {
    const key = `${outcome.count ?? ''}${outcome.petCreated ? '+' : ''}`;
    let found = parts.get(key);
    if (!found) {
      found = around(outcome);
      parts.set(key, found);
    }
    return `{"_aws":{"Timestamp":${timestampMs}${found[0]}${Math.max(0, latencyMs)}${found[1]}`;
  };
}

/** A canary line around its latency value, by outcome: [from after the timestamp to the latency, after the latency]. */
function canaryLineParts(source: CanaryLineSource, latency: CanaryLatency): (outcome: CanaryOutcome) => [string, string] {
  const dims = businessMetrics.canaryDimensions;
  const stage = source.stage === undefined ? [] : ['stage'];
  const across = [...stage, dims.function];
  const root = (petCreated: boolean) =>
    JSON.stringify({
      ...(petCreated ? { service: businessMetrics.serviceName } : {}),
      stage: source.stage,
      [dims.function]: source.function,
      [dims.version]: source.version,
    }).slice(1, -1);
  const metric = (name: string, unit: string) => `{"Name":"${name}","Unit":"${unit}"}`;
  const directive = (dimensions: string[][], metrics: string[]) =>
    `{"Namespace":"${businessMetrics.namespace}","Dimensions":${JSON.stringify(dimensions)},"Metrics":[${metrics.join(',')}]}`;
  return ({ count, petCreated = false }) => {
    const directives = [
      directive(
        [[...across, dims.version], across],
        [metric(latency, MetricUnit.Milliseconds), ...(count ? [metric(count, MetricUnit.Count)] : [])],
      ),
      ...(petCreated ? [directive([['service', ...stage]], [metric(metricNames.petsCreated, MetricUnit.Count)])] : []),
    ];
    const counts = [...(count ? [`"${count}":1`] : []), ...(petCreated ? [`"${metricNames.petsCreated}":1`] : [])];
    return [
      `,"CloudWatchMetrics":[${directives.join(',')}]},${root(petCreated)},"${latency}":`,
      `${counts.map((counted) => `,${counted}`).join('')}}`,
    ];
  };
}

/** Whether Powertools would publish (POWERTOOLS_METRICS_DISABLED first, else not in POWERTOOLS_DEV), as its Metrics decides at construction. */
function metricsEnabled(env: NodeJS.ProcessEnv): boolean {
  const flag = (value: string | undefined) => ['1', 't', 'true', 'y', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
  if (env.POWERTOOLS_METRICS_DISABLED !== undefined) return !flag(env.POWERTOOLS_METRICS_DISABLED);
  return !flag(env.POWERTOOLS_DEV);
}

/** The instance's writers of canary lines, made at its first call (as the Metrics instance is); the version is read per call. */
let canaryWriter: { enabled: boolean; version?: string; lines: Map<CanaryLatency, ReturnType<typeof canaryLines>> } | undefined;

/** Writes a call's canary line on stdout, where Lambda sends it to CloudWatch Logs; nothing when metrics are off. */
function writeCanaryLine(latency: CanaryLatency, latencyMs: number, outcome: CanaryOutcome, env: NodeJS.ProcessEnv): void {
  canaryWriter ??= { enabled: metricsEnabled(env), lines: new Map() };
  if (!canaryWriter.enabled) return;
  const version = env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST';
  if (canaryWriter.version !== version) {
    canaryWriter.version = version;
    canaryWriter.lines.clear();
  }
  let line = canaryWriter.lines.get(latency);
  if (!line) {
    line = canaryLines({ stage: stageDimensions(env).stage, function: functionNameOf(env), version }, latency);
    canaryWriter.lines.set(latency, line);
  }
  process.stdout.write(`${line(Date.now(), latencyMs, outcome)}\n`);
}

/**
 * What a client got from this version: its latency (whose count is the number
 * of answers), a 500 apart from a 503. The deployment check's answers count
 * here: before traffic shifts they are the new version's only data.
 */
export function recordAnswer(statusCode: number, latencyMs: number, env: NodeJS.ProcessEnv = process.env): void {
  const count = statusCode === 503 ? metricNames.unavailable : statusCode >= 500 ? metricNames.serverErrors : undefined;
  const petCreated = petCreatedPending;
  petCreatedPending = false;
  writeCanaryLine(metricNames.answerLatency, latencyMs, { count, petCreated }, env);
}

/** What the authorizer did with a key: let it through, refused it (401 or a Deny), or could not check it (clients got 5xx). */
export type AuthorizerOutcome = 'allowed' | 'refused' | 'failed';

export function recordAuthorizerOutcome(outcome: AuthorizerOutcome, latencyMs: number, env: NodeJS.ProcessEnv = process.env): void {
  const count = outcome === 'refused' ? metricNames.keysRefused : outcome === 'failed' ? metricNames.keyStoreFailures : undefined;
  writeCanaryLine(metricNames.keyCheckLatency, latencyMs, { count }, env);
}

/**
 * Wraps an authorizer handler so that each call records its outcome: a policy
 * with a Deny, or the thrown "Unauthorized" (API Gateway's 401), is refused;
 * any other throw is failed; anything else allowed.
 */
export function withAuthorizerOutcomes<Event, Ctx, Result extends { policyDocument: { Statement: { Effect: string }[] } }>(
  handler: (event: Event, context?: Ctx) => Promise<Result>,
): (event: Event, context?: Ctx) => Promise<Result> {
  return async (event, context) => {
    const startedAt = Date.now();
    try {
      const result = await handler(event, context);
      const refused = result.policyDocument.Statement.some((s) => s.Effect === 'Deny');
      recordAuthorizerOutcome(refused ? 'refused' : 'allowed', Date.now() - startedAt);
      return result;
    } catch (error) {
      const refused = error instanceof Error && error.message === 'Unauthorized';
      recordAuthorizerOutcome(refused ? 'refused' : 'failed', Date.now() - startedAt);
      throw error;
    }
  };
}

function errorCodeOf(body: string | undefined): string {
  try {
    const code = (JSON.parse(body ?? '{}') as { code?: unknown }).code;
    return typeof code === 'string' ? code : 'unknown';
  } catch {
    return 'unknown';
  }
}
