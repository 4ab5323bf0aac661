import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { isDeploymentCheck } from '../../definitions/deployment-check';
import { businessMetrics } from '../../definitions/metrics';
import type { PlanName } from '../../definitions/plans';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/** Which metrics an instance publishes: business ones (service and stage) or a version's canary metrics (and the function). */
export type MetricsKind = 'business' | 'canary';

/**
 * A Metrics instance writing CloudWatch embedded-metric-format lines on stdout
 * (Powertools for AWS Lambda): namespace PetStore, dimensions service=petstore,
 * the stage (when the stack sets it: stageDimensions) and, for canary metrics,
 * the function (canaryDimensionSets adds the version).
 */
export function buildMetrics(kind: MetricsKind, env: NodeJS.ProcessEnv = process.env): Metrics {
  const defaults = stageDimensions(env);
  if (kind === 'canary') defaults[businessMetrics.canaryDimensions.function] = functionNameOf(env);
  return new Metrics({
    namespace: businessMetrics.namespace,
    serviceName: env.POWERTOOLS_SERVICE_NAME ?? businessMetrics.serviceName,
    defaultDimensions: defaults,
  });
}

/**
 * An instance built at its first metric, not at import, so no container pays
 * for building it during its cold start. Off locally and in tests
 * (POWERTOOLS_METRICS_DISABLED), where nobody collects them.
 */
function builtAtFirstUse(kind: MetricsKind): Metrics {
  let instance: Metrics | undefined;
  const metrics = new Proxy({} as Metrics, {
    get(_target, property) {
      instance ??= buildMetrics(kind);
      const value: unknown = Reflect.get(instance, property, instance);
      return typeof value === 'function' ? value.bind(instance) : value;
    },
  });
  return metrics;
}

/** Business metrics: the dashboard and the 429 and key-store alarms read these names. */
export const metrics: Metrics = builtAtFirstUse('business');
/** What each version's clients got: the rollback alarms read these (recordAnswer, recordAuthorizerOutcome). */
export const canaryMetrics: Metrics = builtAtFirstUse('canary');

function functionNameOf(env: NodeJS.ProcessEnv): string {
  return env.AWS_LAMBDA_FUNCTION_NAME ?? 'local';
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

/**
 * A canary metric is extracted twice ("Specification: Embedded metric format":
 * Dimensions is "an array of DimensionSet arrays",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * with the version that answered (the new version's own series) and without it
 * (the function across its versions: the alarms get the old version's series
 * by subtracting). Both carry service, stage and function (the instance's defaults).
 */
function publishCanaryMetrics(target: Metrics, values: [name: string, unit: Unit, value: number][], env = process.env): void {
  target.addDimension(businessMetrics.canaryDimensions.version, env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST');
  target.addDimensions({});
  for (const [name, unit, value] of values) target.addMetric(name, unit, value);
  target.publishStoredMetrics();
}

/** What an answer adds to its latency sample: a 500 (our bug) or a 503 (a dependency failed), else nothing. */
export type AnswerFailure = typeof metricNames.serverErrors | typeof metricNames.unavailable;

/** What names an instance's answers in its canary line: the stage, the function, the version that answered. */
export interface AnswerLineSource {
  stage?: string;
  functionName: string;
  version: string;
}

/** What an answer's line says besides its latency: a failure, and whether it created a customer's pet. */
export interface AnswerOutcome {
  failure?: AnswerFailure;
  petCreated?: boolean;
}

/**
 * An operation's canary lines, the embedded-metric-format line of each answer
 * ("Specification: Embedded metric format",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * the directive Powertools writes for these values (publishCanaryMetrics), and
 * for a created pet a second directive with the business dimensions (service,
 * stage), so PetsCreated needs no line of its own ("CloudWatchMetrics": an
 * array of MetricDirective objects, each with its own Dimensions, all reading
 * the root's members). Built by hand from parts made once per source, because
 * every answer writes one: Powertools' per-metric checks and environment reads
 * were about a third of the warm path's own time. The bill
 * (scripts/cost-model.ts) charges these bytes.
 */
export function answerMetricLines(source: AnswerLineSource): (timestampMs: number, latencyMs: number, outcome?: AnswerOutcome) => string {
  const dims = businessMetrics.canaryDimensions;
  const business = ['service', ...(source.stage === undefined ? [] : ['stage'])];
  const across = [...business, dims.function];
  const root = JSON.stringify({
    service: businessMetrics.serviceName,
    stage: source.stage,
    [dims.function]: source.functionName,
    [dims.version]: source.version,
  });
  const metric = (name: string, unit: string) => `{"Name":"${name}","Unit":"${unit}"}`;
  const directive = (dimensions: string[][], metrics: string[]) =>
    `{"Namespace":"${businessMetrics.namespace}","Dimensions":${JSON.stringify(dimensions)},"Metrics":[${metrics.join(',')}]}`;
  /** The line around its latency value: [from after the timestamp to the latency, after the latency]. */
  const around = ({ failure, petCreated }: AnswerOutcome): [string, string] => {
    const directives = [
      directive(
        [[...across, dims.version], across],
        [metric(metricNames.answerLatency, MetricUnit.Milliseconds), ...(failure ? [metric(failure, MetricUnit.Count)] : [])],
      ),
      ...(petCreated ? [directive([business], [metric(metricNames.petsCreated, MetricUnit.Count)])] : []),
    ];
    const counts = [...(failure ? [`"${failure}":1`] : []), ...(petCreated ? [`"${metricNames.petsCreated}":1`] : [])];
    return [
      `,"CloudWatchMetrics":[${directives.join(',')}]},${root.slice(1, -1)},"${metricNames.answerLatency}":`,
      `${counts.map((count) => `,${count}`).join('')}}`,
    ];
  };
  const parts = new Map<string, [string, string]>();
  return (timestampMs, latencyMs, outcome = {}) => {
    const key = `${outcome.failure ?? ''}${outcome.petCreated ? '+' : ''}`;
    let found = parts.get(key);
    if (!found) {
      found = around(outcome);
      parts.set(key, found);
    }
    return `{"_aws":{"Timestamp":${timestampMs}${found[0]}${Math.max(0, latencyMs)}${found[1]}`;
  };
}

/** Whether Powertools would publish (POWERTOOLS_METRICS_DISABLED first, else not in POWERTOOLS_DEV), as its Metrics decides at construction. */
function metricsEnabled(env: NodeJS.ProcessEnv): boolean {
  const flag = (value: string | undefined) => ['1', 't', 'true', 'y', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
  if (env.POWERTOOLS_METRICS_DISABLED !== undefined) return !flag(env.POWERTOOLS_METRICS_DISABLED);
  return !flag(env.POWERTOOLS_DEV);
}

/** The instance's writer of answer lines, made at its first answer (as the Metrics instances are); the version is read per answer. */
let answerLines: { enabled: boolean; version?: string; line?: ReturnType<typeof answerMetricLines> } | undefined;

/**
 * What a client got from this version: its latency (whose count is the number
 * of answers), a 500 apart from a 503. The deployment check's answers count
 * here: before traffic shifts they are the new version's only data.
 */
export function recordAnswer(statusCode: number, latencyMs: number, env: NodeJS.ProcessEnv = process.env): void {
  answerLines ??= { enabled: metricsEnabled(env) };
  if (!answerLines.enabled) {
    petCreatedPending = false;
    return;
  }
  const version = env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST';
  if (answerLines.version !== version || !answerLines.line) {
    answerLines.version = version;
    answerLines.line = answerMetricLines({ stage: stageDimensions(env).stage, functionName: functionNameOf(env), version });
  }
  const failure = statusCode === 503 ? metricNames.unavailable : statusCode >= 500 ? metricNames.serverErrors : undefined;
  const petCreated = petCreatedPending;
  petCreatedPending = false;
  process.stdout.write(`${answerLines.line(Date.now(), latencyMs, { failure, petCreated })}\n`);
}

/** What the authorizer did with a key: let it through, refused it (401 or a Deny), or could not check it (clients got 5xx). */
export type AuthorizerOutcome = 'allowed' | 'refused' | 'failed';

export function recordAuthorizerOutcome(outcome: AuthorizerOutcome, latencyMs: number, target: Metrics = canaryMetrics): void {
  const values: [string, Unit, number][] = [[metricNames.keyCheckLatency, MetricUnit.Milliseconds, Math.max(0, latencyMs)]];
  if (outcome === 'refused') values.push([metricNames.keysRefused, MetricUnit.Count, 1]);
  if (outcome === 'failed') values.push([metricNames.keyStoreFailures, MetricUnit.Count, 1]);
  publishCanaryMetrics(target, values);
}

/**
 * Wraps an authorizer handler so that each call records its outcome: a policy
 * with a Deny, or the thrown "Unauthorized" (API Gateway's 401), is refused;
 * any other throw is failed; anything else allowed.
 */
export function withAuthorizerOutcomes<Event, Ctx, Result extends { policyDocument: { Statement: { Effect: string }[] } }>(
  handler: (event: Event, context?: Ctx) => Promise<Result>,
  target: Metrics = canaryMetrics,
): (event: Event, context?: Ctx) => Promise<Result> {
  return async (event, context) => {
    const startedAt = Date.now();
    try {
      const result = await handler(event, context);
      const refused = result.policyDocument.Statement.some((s) => s.Effect === 'Deny');
      recordAuthorizerOutcome(refused ? 'refused' : 'allowed', Date.now() - startedAt, target);
      return result;
    } catch (error) {
      const refused = error instanceof Error && error.message === 'Unauthorized';
      recordAuthorizerOutcome(refused ? 'refused' : 'failed', Date.now() - startedAt, target);
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
