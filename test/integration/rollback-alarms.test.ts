import * as fs from 'node:fs';
import * as path from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { businessMetrics } from '../../definitions/metrics';
import { createHandler as createAuthorizer } from '../../functions/authorizer/handler';
import { createHandler as createPetHandler } from '../../functions/create-pet/handler';
import { CustomerTable, generateApiKey } from '../../functions/customers';
import { createDocumentClient, type Dependencies, DYNAMODB_CALL_BUDGET } from '../../functions/runtime/dependencies';
import { LIVE_ALIAS } from '../../lib/constructs/function-rollout';
import { addPetStoreStacks } from '../../lib/petstore-app';
import { projectRoot } from '../../lib/project-root';
import { canary, rollbackThresholds } from '../../lib/stage-config';
import { localCredentials } from '../../local/local-api';
import { type AlarmState, alarmState, type Resolve, type Sample, samplesOf } from '../support/alarm-evaluator';
import { lambdaContext, requestAuthorizerEvent, restProxyEvent } from '../support/api-gateway-events';
import { createTestTables, testDependencies, testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';
import { setEnvironment } from '../support/process-environment';
import { type Json, synthesizeProductionTemplate } from '../support/production-template';

/**
 * Acceptance of the canary: the production template's rollback alarms (as
 * `cdk synth` writes them) evaluated, with CloudWatch's alarm rules
 * (test/support/alarm-evaluator.ts), on the metric lines the real handlers
 * write when run against DynamoDB Local — a bad version's (500 on every
 * request; an authorizer that refuses valid keys; one that cannot read the key
 * store), a good one's, and both versions' during a DynamoDB slowdown.
 *
 * The handlers run a few times per behaviour; a scenario replays the lines
 * they wrote as the traffic of each minute: the pre-traffic check's calls of
 * the new version in minute 0 (one per deployment group's hook run), then,
 * in a busy hour, the canary's share of the clients' calls on the new version
 * and the rest on the old one. The stack names the function and Lambda the
 * version in the environment; here the lines carry the template's values
 * instead (the function's environment; the version's reference, which the
 * evaluator resolves the same way).
 */

const HOOK_RUNS = 4;
/** Client calls of one function per minute in a busy hour (production: about 100 creates per second). */
const BUSY_CALLS_PER_MINUTE = 300;
const NEW_SHARE = canary.percentage / 100;

let template: Json;
let outdir: string;
let dependencies: Dependencies;
let proxy: DynamoDbFaultProxy;
let restoreEnvironment: () => void;

beforeAll(async () => {
  ({ template, outdir } = synthesizeProductionTemplate('petstore-rollback-'));
  // The metrics are on, as in Lambda, for the stage the template is about.
  restoreEnvironment = setEnvironment({ POWERTOOLS_METRICS_DISABLED: 'false', PETSTORE_STAGE: 'production' });
  // The real clock: the latency the handlers report is measured with it.
  dependencies = testDependencies(await createTestTables());
  proxy = await DynamoDbFaultProxy.start(testEndpoint());
}, 120_000);

afterAll(async () => {
  restoreEnvironment?.();
  await proxy?.close();
  fs.rmSync(outdir, { recursive: true, force: true });
});

/** The dependencies through the fault proxy, every DynamoDB answer coming after the SDK's 1 s timeout on both attempts (a slowdown). */
function slowedDown(): Dependencies {
  proxy.inject({ kind: 'late', times: 1_000, delayMs: 1_200 });
  return {
    ...dependencies,
    db: createDocumentClient({ endpoint: proxy.endpoint, region: 'local', budget: DYNAMODB_CALL_BUDGET, ...localCredentials() }),
  };
}

// ---- the template --------------------------------------------------------------------------------

const resolve: Resolve = (value) => {
  if (typeof value === 'string') return value;
  const v = value as Json;
  if (v.Ref) return `ref:${v.Ref}`;
  if (v['Fn::GetAtt']?.[1] === 'Version') return `version:${v['Fn::GetAtt'][0]}`;
  if (v['Fn::Join']) return (v['Fn::Join'][1] as unknown[]).map(resolve).join(v['Fn::Join'][0]);
  throw new Error(`a dimension value outside the evaluator's subset: ${JSON.stringify(value)}`);
};

/** A function's rollback alarms (its deployment group's), its reference and its new version's, as the lines will carry them. */
function rollbackOf(name: 'createPet' | 'authorizer') {
  const resources = template.Resources as Json;
  const [, group] = Object.entries(resources).find(
    ([id, resource]) => resource.Type === 'AWS::CodeDeploy::DeploymentGroup' && id.startsWith(`Rollout${name}Deployment`),
  )!;
  const aliasId = resolveAliasOf(group);
  const alias = resources[aliasId]!.Properties;
  const alarms = (group.Properties.AlarmConfiguration.Alarms as Json[]).map((a) => ({
    name: resources[a.Name.Ref].Properties.AlarmName as string,
    props: resources[a.Name.Ref].Properties as Json,
  }));
  // The function's `function` dimension, as the stack gives it in the function's environment.
  const fn = resources[alias.FunctionName.Ref]!.Properties.Environment.Variables[businessMetrics.functionEnvVar] as string;
  return { alarms, fn, functionName: resolve(alias.FunctionName), newVersion: resolve(alias.FunctionVersion) };
}

/** The alias whose update the group carries out (its CodeDeployLambdaAliasUpdate names the group). */
function resolveAliasOf(group: Json): string {
  const resources = template.Resources as Json;
  const groupId = Object.entries(resources).find(([, r]) => r === group)![0];
  return Object.entries(resources).find(
    ([, r]) => r.Type === 'AWS::Lambda::Alias' && r.UpdatePolicy?.CodeDeployLambdaAliasUpdate?.DeploymentGroupName?.Ref === groupId,
  )![0];
}

// ---- the handlers' lines -------------------------------------------------------------------------

/** The EMF lines one call writes, run as version `version` (AWS_LAMBDA_FUNCTION_VERSION). */
async function linesOf(version: string, call: () => Promise<unknown>): Promise<{ lines: Json[]; answer: unknown }> {
  const written: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(...String(chunk).split('\n'));
    return true;
  });
  process.env.AWS_LAMBDA_FUNCTION_VERSION = version;
  try {
    const answer = await call().catch((error: unknown) => error);
    const lines = written.filter((line) => line.startsWith('{') && line.includes('"_aws"')).map((line) => JSON.parse(line) as Json);
    return { lines, answer };
  } finally {
    spy.mockRestore();
    delete process.env.AWS_LAMBDA_FUNCTION_VERSION;
  }
}

const customer = {
  keyId: 'key_rollback00000001',
  customerId: 'key_rollback00000001',
  plan: 'enterprise',
  perMinute: '100000',
  perDay: '10000000',
};
const createEvent = () =>
  restProxyEvent({
    method: 'POST',
    resource: '/pets',
    path: '/pets',
    body: JSON.stringify({ name: 'canary', categoryId: 1 }),
    headers: { 'Content-Type': 'application/json' },
    authorizer: customer,
  });

/** A version whose logic throws a TypeError before its write: every request answers 500 (and Lambda counts no error). */
function brokenCreatePet(): Dependencies {
  const db = Object.create(dependencies.db) as Dependencies['db'];
  const send = dependencies.db.send.bind(dependencies.db) as (command: object) => Promise<unknown>;
  db.send = (async (command: object) => {
    if (command instanceof PutCommand && command.input.TableName === dependencies.tableNames.pets) {
      throw new TypeError("Cannot read properties of undefined (reading 'status')");
    }
    return send(command);
  }) as Dependencies['db']['send'];
  return { ...dependencies, db };
}

/** Runs createPet `times` times as `version`, returning its lines and answers. */
async function createPetRuns(
  version: string,
  deps: Dependencies,
  times: number,
): Promise<{ lines: Json[]; statuses: number[]; calls: Json[][] }> {
  const handler = createPetHandler(deps);
  const calls: Json[][] = [];
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) {
    const run = await linesOf(version, () => handler(createEvent(), lambdaContext('createPet')));
    calls.push(run.lines);
    statuses.push((run.answer as APIGatewayProxyResult).statusCode);
  }
  return { lines: calls.flat(), statuses, calls };
}

/** Runs the authorizer with a valid key `times` times as `version`: allowed, or what the version does with it. */
async function authorizerRuns(version: string, deps: Dependencies, secret: string, times: number) {
  const handler = createAuthorizer(deps);
  const calls: Json[][] = [];
  const outcomes: string[] = [];
  for (let i = 0; i < times; i++) {
    const event = requestAuthorizerEvent({
      method: 'GET',
      resource: '/pets',
      path: '/pets',
      headers: { Authorization: `Bearer ${secret}` },
    });
    const run = await linesOf(version, () => handler(event, lambdaContext('authorizer')));
    calls.push(run.lines);
    outcomes.push(run.answer instanceof Error ? run.answer.message : 'allowed');
  }
  return { lines: calls.flat(), outcomes, calls };
}

// ---- scenarios -----------------------------------------------------------------------------------

/** The lines as the function `fn` wrote them, version `version`. */
const as = (lines: Json[], fn: string, version: string) => lines.map((line) => ({ ...line, function: fn, version }));

/** `count` lines taken in turn from `lines`. */
const take = (lines: Json[], count: number) => Array.from({ length: count }, (_, i) => lines[i % lines.length]!);

/**
 * Minute 0: the check's calls of the new version (one per hook run); minutes
 * 1 to the canary's end: in a busy hour, the canary's share of the clients'
 * calls on the new version, the rest on the old one; in a quiet hour, none.
 */
function scenario(who: { fn: string; newVersion: string }, newLines: Json[], oldLines: Json[], hour: 'busy' | 'quiet'): Sample[] {
  const minute = (lines: Json[], m: number) => lines.flatMap((line) => samplesOf(line, m));
  const samples = minute(as(take(newLines, HOOK_RUNS), who.fn, who.newVersion), 0);
  if (hour === 'quiet') return samples;
  for (let m = 1; m < canary.intervalMinutes; m++) {
    const onNew = Math.round(BUSY_CALLS_PER_MINUTE * NEW_SHARE);
    samples.push(...minute(as(take(newLines, onNew), who.fn, who.newVersion), m));
    samples.push(...minute(as(take(oldLines, BUSY_CALLS_PER_MINUTE - onNew), who.fn, 'the-old-version'), m));
  }
  return samples;
}

/** Each rollback alarm's state at the end of each minute of the canary's interval. */
function states(alarms: { name: string; props: Json }[], samples: Sample[]): Record<string, AlarmState[]> {
  return Object.fromEntries(
    alarms.map(({ name, props }) => [
      // The name ends in the version's key (function-rollout.ts, versionKey): the alarm as the test knows it is without it.
      name.replace(/^PetStore-Production-/, '').replace(/-[0-9A-Fa-f]{8}$/, ''),
      Array.from({ length: canary.intervalMinutes }, (_, m) => alarmState(props, samples, m, resolve)),
    ]),
  );
}

/** The first minute the alarm is in ALARM (evaluation at its end), or undefined. */
const firstAlarm = (timeline: AlarmState[] | undefined) => {
  const minute = timeline?.indexOf('ALARM') ?? -1;
  return minute < 0 ? undefined : minute;
};
/** A bad version must be caught with a minute left for the metric's delay and CodeDeploy's reaction. */
const LATEST_ALARM_MINUTE = canary.intervalMinutes - 2;

describe('createPet: a version that answers 500 to every request', () => {
  let good: Json[];
  let bad: Json[];
  beforeAll(async () => {
    good = (await createPetRuns('old', dependencies, 3)).lines;
    const runs = await createPetRuns('new', brokenCreatePet(), 3);
    expect(runs.statuses).toEqual([500, 500, 500]);
    bad = runs.lines;
  });

  test.each(['busy', 'quiet'] as const)('%s hour: NewVersionServerErrors is in ALARM in the canary interval', (hour) => {
    const createPet = rollbackOf('createPet');
    const timeline = states(createPet.alarms, scenario(createPet, bad, good, hour));
    // The check's own calls answered 500 in minute 0: no client traffic is needed.
    expect(firstAlarm(timeline.createPetNewVersionServerErrors)).toBe(0);
    expect(firstAlarm(timeline.createPetNewVersionServerErrors)).toBeLessThanOrEqual(LATEST_ALARM_MINUTE);
  });
});

/**
 * What Lambda reports for `count` invocations through the live alias that ended in a function error
 * (a crash, a timeout, out of memory, an init failure): `Errors`, under each dimension set it
 * publishes — the function, the function and alias (`Resource`), and those with the version that ran
 * (`ExecutedVersion`, "only applies to alias invocations": "Using CloudWatch metrics with Lambda",
 * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics.html).
 */
function lambdaErrors(functionName: string, version: string, minute: number, count: number): Sample[] {
  const resource = `${functionName}:${LIVE_ALIAS}`;
  const sets: Record<string, string>[] = [
    { FunctionName: functionName },
    { FunctionName: functionName, Resource: resource },
    { FunctionName: functionName, Resource: resource, ExecutedVersion: version },
  ];
  return sets.map((dimensions) => ({ namespace: 'AWS/Lambda', metricName: 'Errors', dimensions, minute, value: 1, count }));
}

/**
 * A version that crashes on every invocation: no code of ours runs to its answer, so it writes no
 * canary line (clients get API Gateway's INTEGRATION_FAILURE, a 503 with Retry-After); only Lambda's
 * Errors tell. The old version answers as it always did.
 */
describe('createPet: a version that crashes on every request (no answer, no canary line)', () => {
  let good: Json[];
  beforeAll(async () => {
    good = (await createPetRuns('old', dependencies, 3)).lines;
  });

  test.each(['busy', 'quiet'] as const)(
    '%s hour: NewVersionErrors (Lambda Errors of the new version) is in ALARM in the canary interval',
    (hour) => {
      const createPet = rollbackOf('createPet');
      const samples = lambdaErrors(createPet.functionName, createPet.newVersion, 0, HOOK_RUNS);
      for (let m = 1; hour === 'busy' && m < canary.intervalMinutes; m++) {
        const onNew = Math.round(BUSY_CALLS_PER_MINUTE * NEW_SHARE);
        samples.push(...lambdaErrors(createPet.functionName, createPet.newVersion, m, onNew));
        samples.push(
          ...as(take(good, BUSY_CALLS_PER_MINUTE - onNew), createPet.fn, 'the-old-version').flatMap((line) => samplesOf(line, m)),
        );
      }
      const timeline = states(createPet.alarms, samples);
      // The check's own calls crashed in minute 0: no client traffic is needed.
      expect(firstAlarm(timeline.createPetNewVersionErrors)).toBe(0);
      expect(firstAlarm(timeline.createPetNewVersionErrors)).toBeLessThanOrEqual(LATEST_ALARM_MINUTE);
      // A crash counts no 500 of ours: the Errors alarm is what catches it.
      expect(firstAlarm(timeline.createPetNewVersionServerErrors)).toBeUndefined();
    },
  );
});

describe('the authorizer', () => {
  let secret: string;
  let allowing: Json[];
  beforeAll(async () => {
    const key = generateApiKey({ plan: 'pro', owner: 'canary test', now: Date.now() });
    await new CustomerTable(dependencies.db, dependencies.tableNames).insert(key.record);
    secret = key.secret;
    const runs = await authorizerRuns('old', dependencies, secret, 3);
    expect(runs.outcomes).toEqual(['allowed', 'allowed', 'allowed']);
    allowing = runs.lines;
  });

  test('a version that refuses valid keys (it reads an empty key table): NewVersionKeysRefused in ALARM, busy hour', async () => {
    const emptyKeys = await createTestTables();
    const runs = await authorizerRuns(
      'new',
      { ...dependencies, tableNames: { ...dependencies.tableNames, apiKeys: emptyKeys.apiKeys } },
      secret,
      3,
    );
    expect(runs.outcomes).toEqual(['Unauthorized', 'Unauthorized', 'Unauthorized']);
    const authorizer = rollbackOf('authorizer');
    const timeline = states(authorizer.alarms, scenario(authorizer, runs.lines, allowing, 'busy'));
    expect(firstAlarm(timeline.authorizerNewVersionKeysRefused)).toBe(1);
    expect(firstAlarm(timeline.authorizerNewVersionKeysRefused)).toBeLessThanOrEqual(LATEST_ALARM_MINUTE);
    expect(firstAlarm(timeline.authorizerNewVersionKeyStoreFailures)).toBeUndefined();
  });

  test('a version that cannot read the key store (a table that does not exist): NewVersionKeyStoreFailures in ALARM, busy hour', async () => {
    const runs = await authorizerRuns(
      'new',
      { ...dependencies, tableNames: { ...dependencies.tableNames, apiKeys: 'no-such-table' } },
      secret,
      3,
    );
    expect(runs.outcomes).toEqual(['Key store unavailable', 'Key store unavailable', 'Key store unavailable']);
    const authorizer = rollbackOf('authorizer');
    const timeline = states(authorizer.alarms, scenario(authorizer, runs.lines, allowing, 'busy'));
    expect(firstAlarm(timeline.authorizerNewVersionKeyStoreFailures)).toBe(1);
    expect(firstAlarm(timeline.authorizerNewVersionKeyStoreFailures)).toBeLessThanOrEqual(LATEST_ALARM_MINUTE);
  });

  test('a good version in a quiet hour (only the check calls it): every alarm stays OK', () => {
    const authorizer = rollbackOf('authorizer');
    const timeline = states(authorizer.alarms, scenario(authorizer, allowing, allowing, 'quiet'));
    for (const [name, line] of Object.entries(timeline)) expect([name, line]).toEqual([name, line.map(() => 'OK')]);
  });
});

describe('a good createPet version', () => {
  test.each(['busy', 'quiet'] as const)('%s hour: every alarm stays OK', async (hour) => {
    const old = (await createPetRuns('old', dependencies, 3)).lines;
    const fresh = (await createPetRuns('new', dependencies, 3)).lines;
    const createPet = rollbackOf('createPet');
    const timeline = states(createPet.alarms, scenario(createPet, fresh, old, hour));
    for (const [name, line] of Object.entries(timeline)) expect([name, line]).toEqual([name, line.map(() => 'OK')]);
  });

  test('during a DynamoDB slowdown, answering 503 slowly exactly as the old version does: every alarm stays OK', async () => {
    // Every DynamoDB answer comes after the SDK's 1 s timeout, on both attempts: what a slowdown does to both versions.
    const slow = slowedDown();
    try {
      const old = await createPetRuns('old', slow, 2);
      const fresh = await createPetRuns('new', slow, 2);
      expect([...old.statuses, ...fresh.statuses]).toEqual([503, 503, 503, 503]);
      const createPet = rollbackOf('createPet');
      const timeline = states(createPet.alarms, scenario(createPet, fresh.lines, old.lines, 'busy'));
      for (const [name, line] of Object.entries(timeline)) expect([name, line]).toEqual([name, line.map(() => 'OK')]);
      // The same lines from the new version alone, against a healthy old one, do roll back: the comparison, not the threshold, spares it.
      const healthyOld = (await createPetRuns('old', dependencies, 2)).lines;
      const alone = states(createPet.alarms, scenario(createPet, fresh.lines, healthyOld, 'busy'));
      expect(firstAlarm(alone.createPetNewVersionUnavailable)).toBe(1);
      expect(firstAlarm(alone.createPetNewVersionAnswerLatency)).toBe(2);
    } finally {
      proxy.clear();
    }
  }, 60_000);
});

// ---- the verdict is not chance -------------------------------------------------------------------

/** A fixed-seed generator (mulberry32): the same intervals on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What one version's calls wrote: the lines of each call that went well, and of each that failed. */
interface Behaviour {
  ok: Json[][];
  failed: Json[][];
}

/**
 * One canary interval as metric samples: minute 0 the check's calls of the new
 * version, then `intervalMinutes` minutes of `newPerMinute` calls on the new
 * version and 9 times as many on the old (the canary's 10 %); each call fails
 * with its version's chance, and writes the lines the real handler wrote for
 * that outcome. Samples carry counts, as a statistic set would.
 */
function canaryInterval(
  who: { fn: string; newVersion: string },
  lines: Behaviour,
  traffic: { newPerMinute: number; pNew: number; pOld: number },
  random: () => number,
): Sample[] {
  const samples: Sample[] = [];
  const write = (minute: number, version: string, calls: number, p: number) => {
    let failed = 0;
    for (let i = 0; i < calls; i++) if (random() < p) failed++;
    for (const [outcome, count] of [
      [lines.failed, failed],
      [lines.ok, calls - failed],
    ] as const) {
      // The count spread over the recorded calls, as the handlers' calls spread over their timings.
      outcome.forEach((call, i) => {
        const share = Math.floor(count / outcome.length) + (i < count % outcome.length ? 1 : 0);
        if (share === 0) return;
        for (const line of call) {
          for (const sample of samplesOf({ ...line, function: who.fn, version }, minute)) samples.push({ ...sample, count: share });
        }
      });
    }
  };
  write(0, who.newVersion, HOOK_RUNS, traffic.pNew);
  const oldPerMinute = Math.round((traffic.newPerMinute * (1 - NEW_SHARE)) / NEW_SHARE);
  for (let m = 1; m <= canary.intervalMinutes; m++) {
    write(m, who.newVersion, traffic.newPerMinute, traffic.pNew);
    write(m, 'the-old-version', oldPerMinute, traffic.pOld);
  }
  return samples;
}

/** The first minute, from the check's to the canary's last, at whose end one of the alarms is in ALARM. */
function firstRollback(alarms: { props: Json }[], samples: Sample[]): number | undefined {
  for (let m = 0; m <= canary.intervalMinutes; m++) {
    if (alarms.some(({ props }) => alarmState(props, samples, m, resolve) === 'ALARM')) return m;
  }
  return undefined;
}

const INTERVALS = 1_000;

/** The share of INTERVALS canary intervals whose first rollback (if any) came by `byMinute`. */
function rollbackShare(
  name: 'createPet' | 'authorizer',
  lines: Behaviour,
  traffic: Parameters<typeof canaryInterval>[2],
  byMinute: number,
) {
  const who = rollbackOf(name);
  const random = seeded(38);
  let rolledBack = 0;
  for (let i = 0; i < INTERVALS; i++) {
    const first = firstRollback(who.alarms, canaryInterval(who, lines, traffic, random));
    if (first !== undefined && first <= byMinute) rolledBack++;
  }
  return rolledBack / INTERVALS;
}

describe(`the verdict is not chance: the template's rollback alarms over ${INTERVALS} canary intervals per case (fixed seed)`, () => {
  const behaviours: Partial<Record<'createPet' | 'authorizer', Behaviour>> = {};
  beforeAll(async () => {
    // createPet's failure in a slowdown: DynamoDB answers after the SDK's timeout, twice, and the client gets a slow 503.
    const slow = slowedDown();
    try {
      const failed = await createPetRuns('x', slow, 2);
      expect(failed.statuses).toEqual([503, 503]);
      behaviours.createPet = { ok: (await createPetRuns('x', dependencies, 3)).calls, failed: failed.calls };
    } finally {
      proxy.clear();
    }
    // The authorizer's: the key store cannot be read (the client gets a 503).
    const key = generateApiKey({ plan: 'pro', owner: 'canary chance', now: Date.now() });
    await new CustomerTable(dependencies.db, dependencies.tableNames).insert(key.record);
    const unreadable = { ...dependencies, tableNames: { ...dependencies.tableNames, apiKeys: 'no-such-table' } };
    behaviours.authorizer = {
      ok: (await authorizerRuns('x', dependencies, key.secret, 3)).calls,
      failed: (await authorizerRuns('x', unreadable, key.secret, 3)).calls,
    };
  }, 60_000);

  const functions = ['createPet', 'authorizer'] as const;
  const slowdowns = functions.flatMap((name) =>
    [10, 30].flatMap((newPerMinute) => [0.1, 0.3, 0.5].map((p) => ({ name, newPerMinute, p }))),
  );
  test.each(slowdowns)(
    "$name, a slowdown failing $p of both versions' calls, $newPerMinute new-version calls a minute: at most 1 % of intervals roll back",
    ({ name, newPerMinute, p }) => {
      const share = rollbackShare(name, behaviours[name]!, { newPerMinute, pNew: p, pOld: p }, canary.intervalMinutes);
      expect(share).toBeLessThanOrEqual(0.01);
    },
  );

  const worse = functions.flatMap((name) => [0, 0.1, 0.3, 0.5].map((pOld) => ({ name, pOld, pNew: pOld + 0.3 })));
  test.each(worse)(
    '$name, a version failing $pNew of its calls where the old fails $pOld, 30 new-version calls a minute: in ALARM within the interval in at least 95 %',
    ({ name, pOld, pNew }) => {
      const share = rollbackShare(name, behaviours[name]!, { newPerMinute: 30, pNew, pOld }, LATEST_ALARM_MINUTE);
      expect(share).toBeGreaterThanOrEqual(0.95);
    },
  );

  test('every comparison fits in one metric-math query (MetricDataQuery Expression: at most 2,048 characters)', () => {
    // "MetricDataQuery", Expression, Length Constraints,
    // https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataQuery.html
    for (const name of functions) {
      for (const { props } of rollbackOf(name).alarms) {
        for (const query of (props.Metrics ?? []) as Json[])
          if (query.Expression) expect(query.Expression.length).toBeLessThanOrEqual(2_048);
      }
    }
  });
});

test('a new version gets new rollback alarms (a new name: a replacement, starting in INSUFFICIENT_DATA); an unchanged function keeps its own', () => {
  // "When you update an existing alarm, its state is left unchanged" (PutMetricAlarm,
  // https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html): an alarm
  // re-pointed at the next version could start its deployment in ALARM. A changed name cannot.
  const names = (t: Json, name: 'createPet' | 'authorizer') => {
    const saved = template;
    template = t;
    try {
      return rollbackOf(name).alarms.map((a) => a.name);
    } finally {
      template = saved;
    }
  };
  const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
  const app = new App({ outdir: fs.mkdtempSync(path.join(outdir, 'next-')), context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  const next = addPetStoreStacks(app).production;
  // A change of createPet's configuration publishes a new version of it, as a code change does.
  next.operationFunctions.createPet.addEnvironment('PETSTORE_CANARY_TEST', 'next');
  const nextTemplate = Template.fromStack(next).toJSON() as Json;
  const before = names(template, 'createPet');
  const after = names(nextTemplate, 'createPet');
  expect(after).toHaveLength(before.length);
  for (const name of after) expect(before).not.toContain(name);
  expect(after.map((n) => n.slice(0, -8))).toEqual(before.map((n) => n.slice(0, -8)));
  expect(names(nextTemplate, 'authorizer')).toEqual(names(template, 'authorizer'));
  // The alias update that starts the deployment waits for the new alarms and for the group that lists them.
  const resources = template.Resources as Json;
  for (const [groupId, group] of Object.entries(resources).filter(([, r]) => r.Type === 'AWS::CodeDeploy::DeploymentGroup')) {
    const alias = resources[resolveAliasOf(group)]!;
    const alarmIds = (group.Properties.AlarmConfiguration.Alarms as Json[]).map((a) => a.Name.Ref as string);
    expect(alias.DependsOn).toEqual(expect.arrayContaining([groupId, ...alarmIds]));
  }
}, 120_000);

test('the scenarios give the comparisons enough calls: the canary share of a busy minute is above minCalls', () => {
  expect(Math.round(BUSY_CALLS_PER_MINUTE * NEW_SHARE)).toBeGreaterThanOrEqual(rollbackThresholds.minCalls);
  expect(HOOK_RUNS).toBeLessThan(rollbackThresholds.minCalls);
});
