import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
  UpdateApiKeyCommand,
  UpdateUsagePlanCommand,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand, type Output } from '@aws-sdk/client-cloudformation';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type PlanLimits, type PlanName, planNames, plans } from '../../definitions/plans';
import { authorizer, stageName } from '../../definitions/routes';
import { stackOutputNames } from '../../definitions/stack-outputs';
import { type DeployedStage, stackNames } from '../../definitions/stages';
import type { TableName } from '../../definitions/tables';
import {
  customerUsagePlan,
  sameUsagePlan,
  type UsagePlanSettings,
  usagePlanLimits,
  widerUsagePlan,
} from '../../definitions/usage-plan-limits';
import { type CustomerSecrets, CustomerTable, type MeteredCustomer, type Secret } from '../../functions/customers';
import { UsageCounters } from '../../functions/rate-limit';
import { type Clock, systemClock } from '../../functions/runtime/clock';
import { createDynamoDbClient, documentClientOver } from '../../functions/runtime/dependencies';
import { AdminError, describeError } from '../errors';
import { type KeyAdminTarget, type Metering, type MeteringChange, type MeteringRelease, nothingToChange } from './target';

/** The plans with a usage plan in the stack; Enterprise keys get one each. */
const fixedPlans = planNames.filter((plan) => plans[plan].limits !== 'custom');

export interface AwsClients {
  cloudFormation: CloudFormationClient;
  apiGateway: APIGatewayClient;
  dynamoDb: DynamoDBClient;
}

export interface Deployment {
  stage: DeployedStage;
  stackName: string;
  restApiId: string;
  usagePlanIds: Partial<Record<PlanName, string>>;
  tableNames: Pick<Record<TableName, string>, 'apiKeys' | 'rateLimits'>;
  /** Pooled metering keys per fixed plan; absent from a stack deployed before pooling. */
  meteringKeysPerPlan?: number;
}

/**
 * A deployed stage: its tables and usage plans come from the outputs of its
 * CloudFormation stack (never hand-copied ids), and the operator's own AWS
 * credentials do the work.
 */
export async function openAwsTarget(options: {
  stage: DeployedStage;
  region?: string;
  clients?: AwsClients;
  retryTiming?: RetryTiming;
  pacing?: ControlPlanePacing;
}): Promise<KeyAdminTarget> {
  const clients = options.clients ?? createClients(options.region);
  const close = () => {
    clients.cloudFormation.destroy();
    clients.apiGateway.destroy();
    clients.dynamoDb.destroy();
  };
  try {
    const deployment = await describeDeployment(clients.cloudFormation, options.stage);
    const db = documentClientOver(clients.dynamoDb);
    return {
      name: `${options.stage} (${deployment.stackName})`,
      keys: new CustomerTable(db, deployment.tableNames),
      counters: new UsageCounters(db, deployment.tableNames.rateLimits),
      metering: new ApiGatewayMetering(
        retryingSends(clients.apiGateway, options.retryTiming ?? realRetryTiming, options.pacing),
        deployment,
      ),
      close,
    };
  } catch (error) {
    close();
    throw error;
  }
}

function createClients(region: string | undefined): AwsClients {
  const config = region ? { region } : {};
  return {
    cloudFormation: new CloudFormationClient(config),
    apiGateway: new APIGatewayClient(config),
    // An operator waits on each call: the SDK's own retries, no request-path budget.
    dynamoDb: createDynamoDbClient({ ...config, budget: 'sdk-defaults' }),
  };
}

/** The stage's table names, usage plan ids and REST API id, from its stack's outputs. */
export async function describeDeployment(cloudFormation: CloudFormationClient, stage: DeployedStage): Promise<Deployment> {
  const stackName = stackNames[stage];
  let outputs: Output[];
  let status: string | undefined;
  try {
    const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
    outputs = Stacks?.[0]?.Outputs ?? [];
    status = Stacks?.[0]?.StackStatus;
  } catch (error) {
    if (error instanceof Error && error.name === 'ValidationError' && /does not exist/i.test(error.message)) {
      const region = await cloudFormation.config.region().catch(() => 'this region');
      throw new AdminError(
        `Stack ${stackName} is not deployed in ${region}: deploy it (\`npx cdk deploy ${stackName}\`) or pass --region with the region it is in.`,
      );
    }
    throw error;
  }
  const output = (key: string): string => {
    const value = outputs.find((candidate) => candidate.OutputKey === key)?.OutputValue;
    if (!value) {
      throw new AdminError(
        `Stack ${stackName} (${status ?? 'unknown status'}) has no output ${key}: deploy the current version (\`npx cdk deploy ${stackName}\`).`,
      );
    }
    return value;
  };
  const pooled = outputs.find((candidate) => candidate.OutputKey === stackOutputNames.meteringKeysPerPlan)?.OutputValue;
  return {
    stage,
    stackName,
    ...(pooled ? { meteringKeysPerPlan: Number(pooled) } : {}),
    restApiId: output(stackOutputNames.restApiId),
    usagePlanIds: Object.fromEntries(fixedPlans.map((plan) => [plan, output(stackOutputNames.usagePlan(plan))])),
    tableNames: { apiKeys: output(stackOutputNames.table('apiKeys')), rateLimits: output(stackOutputNames.table('rateLimits')) },
  };
}

/**
 * How long the key tool retries one API Gateway call that API Gateway refused
 * as transient (transientRefusal), from its first try.
 * CreateUsagePlanKey "can run only one at a time in an AWS region" (AWS Support,
 * quoted in https://github.com/serverless/serverless/issues/12065), so a deploy
 * of either stage, or another administrator's command, makes it answer 409
 * "Unable to complete operation due to concurrent modification. Please try
 * again later."; a burst of control-plane calls gets 429. Both mean the call
 * was not carried out, so it is safe to repeat. The bound leaves room for
 * two of the waits UpdateUsagePlan's quota asks for (UPDATE_USAGE_PLAN_INTERVAL_MS).
 */
export const API_GATEWAY_RETRY_BOUND_MS = 60_000;
/** The backoff's first ceiling and its cap: the waits spread the callers apart ("full jitter"). */
const RETRY_BASE_MS = 250;
const RETRY_CAP_MS = 8_000;
/** Waits this long or longer are announced to the administrator (shorter ones pass unnoticed). */
const ANNOUNCED_WAIT_MS = 1_000;

/**
 * API Gateway allows one UpdateUsagePlan every 20 seconds per account, a
 * quota that cannot be increased ("Amazon API Gateway quotas", table "API
 * Gateway quotas for creating, deploying and managing an API",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html).
 * The tool calls it to raise or lower an Enterprise customer's own usage plan
 * (set-plan) and to detach one from its stage before deleting it (revoke of a
 * customer's last key, release-metering: one per key released).
 */
export const UPDATE_USAGE_PLAN_INTERVAL_MS = 20_000;
/** The calls whose per-account quota is a spacing, by name: the tool spaces its own calls of them. */
const spacedCalls: Readonly<Record<string, number>> = { UpdateUsagePlan: UPDATE_USAGE_PLAN_INTERVAL_MS };

/** What the retries wait with; tests pass their clock and a sleep that moves it. */
export interface RetryTiming {
  now: Clock;
  sleep: (ms: number) => Promise<void>;
  /** A number in [0, 1), for the jitter. */
  random: () => number;
}

export const realRetryTiming: RetryTiming = {
  now: systemClock,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

/**
 * What every command of one petstore-keys process shares: when it last sent
 * each spaced call, and where it tells the administrator that it waits (a
 * line on standard error). Spacing is per process only: the quota is the
 * account's, and whoever else calls UpdateUsagePlan in the account (a deploy,
 * the console, another administrator's petstore-keys) shares no state with
 * this process. Against them the tool can only do what API Gateway's 429
 * TooManyRequestsException asks: wait its `retryAfterSeconds` (the Retry-After
 * header) and try again.
 */
export interface ControlPlanePacing {
  lastSent: Map<string, number>;
  notify: (line: string) => void;
}

export function newPacing(notify: (line: string) => void = () => {}): ControlPlanePacing {
  return { lastSent: new Map(), notify };
}

/**
 * The client, its `send` spacing the calls of spacedCalls and retrying what
 * API Gateway refuses as transient, for API_GATEWAY_RETRY_BOUND_MS at most:
 * a 429 after the wait it asks for (else a spaced call's interval), a 409 of
 * concurrent modification with exponential backoff and full jitter (a random
 * wait between 0 and min(cap, base × 2^retry): "Exponential Backoff And
 * Jitter", https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/).
 * A permanent ConflictException fails at once with API Gateway's own
 * message. A failure undoes the change it was part of (Undo.guard).
 */
export function retryingSends(client: APIGatewayClient, timing: RetryTiming, pacing: ControlPlanePacing = newPacing()): APIGatewayClient {
  const send = async (command: Parameters<APIGatewayClient['send']>[0]) => {
    const call = command.constructor.name.replace(/Command$/, '');
    await waitForSpacing(call, timing, pacing);
    const attempt = () => client.send(command).finally(() => spacedCalls[call] && pacing.lastSent.set(call, timing.now()));
    const deadline = timing.now() + API_GATEWAY_RETRY_BOUND_MS;
    for (let retry = 0; ; retry++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof Error) || !retriedGatewayErrors.has(error.name)) throw error;
        if (!transientRefusal(error)) throw permanentConflict(call, error);
        const left = deadline - timing.now();
        if (left <= 0) throw gaveUp(call, error);
        const wait = Math.min(left, retryWait(call, error, retry, timing));
        if (wait >= ANNOUNCED_WAIT_MS) pacing.notify(`waiting ${seconds(wait)} s: ${refusalReason(call, error)}`);
        await timing.sleep(wait);
      }
    }
  };
  // Everything but send is the client's own (its config, destroy).
  return Object.assign(Object.create(client) as APIGatewayClient, { send });
}

const retriedGatewayErrors = new Set(['ConflictException', 'TooManyRequestsException']);

/**
 * Whether API Gateway marks a refusal as one to repeat. A 429 always ("The
 * request has reached its throttling limit. Retry after the specified time
 * period."). A 409 ConflictException only for a concurrent modification: API
 * Gateway documents ConflictException as "The request configuration has
 * conflicts. For details, see the accompanying error message." (Amazon API
 * Gateway REST API Reference, "UpdateUsagePlan", Errors; the same for every
 * call the tool makes), its SDK marks it neither `$retryable`
 * nor with a Retry-After (@aws-sdk/client-api-gateway: only the 429 and
 * LimitExceededException carry `retryAfterSeconds`), so the message alone
 * tells "Unable to complete operation due to concurrent modification. Please
 * try again later." from a conflict that stays, such as an API key value that
 * already exists. The Terraform AWS provider retries API Gateway's
 * ConflictException on that message the same way
 * (https://github.com/hashicorp/terraform-provider-aws/issues/776).
 */
export function transientRefusal(error: Error): boolean {
  if (error.name === 'TooManyRequestsException') return true;
  return error.name === 'ConflictException' && /concurrent modification/i.test(error.message);
}

/** How long to wait before the next try: what API Gateway asked for, else a spaced call's interval, else full jitter. */
function retryWait(call: string, error: Error, retry: number, timing: RetryTiming): number {
  if (error.name === 'TooManyRequestsException') {
    const asked = Number((error as { retryAfterSeconds?: string }).retryAfterSeconds) * 1000;
    if (asked > 0) return asked;
    if (spacedCalls[call]) return spacedCalls[call];
  }
  return Math.floor(timing.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** retry));
}

/** Waits, saying so, until the process's last call of a spaced call is its interval ago. */
async function waitForSpacing(call: string, timing: RetryTiming, pacing: ControlPlanePacing): Promise<void> {
  const interval = spacedCalls[call];
  const last = pacing.lastSent.get(call);
  if (interval === undefined || last === undefined) return;
  const wait = last + interval - timing.now();
  if (wait <= 0) return;
  pacing.notify(`waiting ${seconds(wait)} s: ${quotaText(call)}`);
  await timing.sleep(wait);
}

/** A spaced call's quota in words, e.g. "API Gateway allows one UpdateUsagePlan every 20 s per account". */
function quotaText(call: string): string {
  return `API Gateway allows one ${call} every ${seconds(spacedCalls[call] ?? 0)} s per account`;
}

/** Why a call is tried again: a spaced call's quota, or API Gateway's own words. */
function refusalReason(call: string, error: Error): string {
  return quotaRefusal(call, error) ? `${quotaText(call)} (${error.name})` : `API Gateway refused ${call} (${error.name}: ${error.message})`;
}

const quotaRefusal = (call: string, error: Error) => error.name === 'TooManyRequestsException' && spacedCalls[call] !== undefined;

const seconds = (ms: number) => Math.ceil(ms / 1000);

function gaveUp(call: string, error: Error): AdminError {
  const who = quotaRefusal(call, error)
    ? `${quotaText(call)}, and a deploy or another petstore-keys command in this account and Region kept calling it`
    : 'a deploy or another petstore-keys command in this account and Region is changing API keys or usage plans at the same time';
  return new AdminError(
    `API Gateway kept refusing ${call} for ${API_GATEWAY_RETRY_BOUND_MS / 1000} s (${error.name}: ${error.message}): ${who}. Run the command again once it has finished.`,
  );
}

function permanentConflict(call: string, error: Error): AdminError {
  return new AdminError(
    `API Gateway refused ${call} (${error.name}: ${error.message}). This conflict is not a concurrent modification, so it was not retried: repeating the call meets it again until what it names is changed.`,
  );
}

/** Steps that undo what was done so far, run last first. */
class Undo {
  private steps: { what: string; run: () => Promise<void> }[] = [];

  add(what: string, run: () => Promise<void>): void {
    this.steps.push({ what, run });
  }

  /** Runs every step; throws one error naming whatever could not be undone, for a person to fix. */
  async run(): Promise<void> {
    const failed: string[] = [];
    for (const step of this.steps.reverse()) {
      try {
        await step.run();
      } catch (error) {
        failed.push(`${step.what} (${describeError(error)})`);
      }
    }
    this.steps = [];
    if (failed.length > 0) throw new AdminError(`still to do by hand in API Gateway: ${failed.join('; ')}`);
  }

  /** Runs `work`; if it fails, undoes what it did and rethrows. */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      try {
        await this.run();
      } catch (undoError) {
        throw new AdminError(`${describeError(error)} Undoing failed: ${describeError(undoError)}`);
      }
      throw error;
    }
  }

  change(finish: () => Promise<void> = async () => {}): MeteringChange {
    return { undo: () => this.run(), finish };
  }
}

interface GatewayKey {
  id: string;
  enabled: boolean;
}

/**
 * A key's metering in API Gateway. A fixed-plan key needs nothing here: the
 * stack's pooled metering keys of its plan meter it (functions/domain/metering.ts).
 * An Enterprise customer has an API key named `petstore-<stage>-<customerId>`
 * whose value is the customer's meteringKey (the authorizer's
 * usageIdentifierKey), in a usage plan of its own,
 * `petstore-<stage>-enterprise-<customerId>`. Names tie them to the customer,
 * so nothing else needs storing and a rerun can find them; a rotation keeps
 * them (the customer's, not the secret's).
 *
 * Usage plans per account and Region: 300 by default, raisable ("Amazon API
 * Gateway quotas", https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html):
 * the three fixed plans of each stage take 6, every Enterprise key one more.
 * Near the quota, issuing an Enterprise key fails with LimitExceededException,
 * the tool undoes what it created and says which quota to raise.
 */
export class ApiGatewayMetering implements Metering {
  constructor(
    private readonly gateway: APIGatewayClient,
    private readonly deployment: Deployment,
  ) {}

  apiKeyName(keyId: string): string {
    return `petstore-${this.deployment.stage}-${keyId}`;
  }

  ownPlanName(keyId: string): string {
    return `petstore-${this.deployment.stage}-enterprise-${keyId}`;
  }

  async enrol(customer: MeteredCustomer): Promise<MeteringChange> {
    if (customer.plan !== 'enterprise') return nothingToChange;
    const undo = new Undo();
    await undo.guard(async () => {
      const { id } = await this.gateway.send(
        new CreateApiKeyCommand({
          name: this.apiKeyName(customer.customerId),
          description: `Meters Pet Store customer ${customer.customerId}; managed by petstore-keys.`,
          value: customer.meteringKey,
          enabled: true,
        }),
      );
      const apiKeyId = required(id, 'CreateApiKey returned no id');
      undo.add(`delete API key ${this.apiKeyName(customer.customerId)}`, () => this.deleteApiKey(apiKeyId));
      await this.join(apiKeyId, await this.createOwnPlan(customer, undo), undo);
    });
    return undo.change();
  }

  async changePlan(before: MeteredCustomer, after: MeteredCustomer): Promise<MeteringChange> {
    const apiKey = await this.findApiKey(before.customerId);
    const current = apiKey ? await this.plansOf(apiKey.id) : [];
    const ownPlan = current.find((plan) => plan.name === this.ownPlanName(before.customerId));
    // The customer's own usage plan follows its limits, on Enterprise and off it: from Enterprise to a
    // fixed plan the pool meters it from the DynamoDB write on, but the authorizer's cached answers keep
    // naming its own API key for up to their TTL, so that key stays metered, by a plan that allows what
    // the new limits allow, until release() lets it go (a 401 or a 429 for a working key otherwise).
    if (ownPlan) return this.followLimits(ownPlan, after.limits);
    // An old-style key (its own API key in a fixed plan) to another fixed plan: the authorizer
    // already names the pool's key for it, so its own API key retires at once.
    if (after.plan !== 'enterprise') return apiKey && before.plan !== 'enterprise' ? this.withdraw(before) : nothingToChange;
    // To Enterprise from a pooled plan: an API key and usage plan of its own.
    if (!apiKey) return this.enrol(after);
    const undo = new Undo();
    await undo.guard(async () => {
      const ownPlanId = await this.createOwnPlan(after, undo);
      // A key may belong to one usage plan per stage: leave first, then join.
      for (const plan of current) await this.leave(apiKey.id, required(plan.id, 'usage plan without id'), undo);
      await this.join(apiKey.id, ownPlanId, undo);
    });
    return undo.change();
  }

  /**
   * Moves a customer's own usage plan to the throttle of its new limits in the
   * order that never refuses what the new limits allow, whatever the
   * authorizer's cached answer says: a raise before the DynamoDB write (undone
   * if the write does not land), a lowering after it (in `finish`: should it
   * fail, the plan stays higher than the limits, which our own counters enforce).
   */
  private async followLimits(plan: UsagePlan, limits: PlanLimits): Promise<MeteringChange> {
    const now = settingsOf(plan);
    const wanted = customerUsagePlan(limits);
    const meanwhile = widerUsagePlan(now, wanted);
    const undo = new Undo();
    if (!sameUsagePlan(meanwhile, now)) {
      await undo.guard(() => this.setThrottle(plan, meanwhile, undo));
    }
    return undo.change(async () => {
      if (!sameUsagePlan(wanted, meanwhile)) await this.setThrottle(plan, wanted);
    });
  }

  async withdraw(customer: MeteredCustomer): Promise<MeteringChange> {
    const apiKey = await this.findApiKey(customer.customerId);
    const undo = new Undo();
    if (apiKey) {
      const current = await this.plansOf(apiKey.id);
      await undo.guard(async () => {
        if (apiKey.enabled) {
          await this.setEnabled(apiKey.id, false);
          undo.add(`enable API key ${this.apiKeyName(customer.customerId)} again`, () => this.setEnabled(apiKey.id, true));
        }
        for (const plan of current) await this.leave(apiKey.id, required(plan.id, 'usage plan without id'), undo);
      });
    }
    // Deleting cannot be undone: it waits until DynamoDB says revoked.
    return undo.change(async () => {
      if (apiKey) await this.deleteApiKey(apiKey.id);
      const ownPlan = await this.findPlanByName(this.ownPlanName(customer.customerId));
      if (ownPlan) await this.deleteUsagePlan(existingPlan(ownPlan));
    });
  }

  /**
   * Releases the API keys (and own usage plans) that no working key needs and
   * no cached authorizer answer can still name: of keys moved off Enterprise
   * longer ago than the authorizer's cache TTL, of rotated keys past their
   * grace (they answer 401 anyway), of revoked keys whose clean-up was left
   * unfinished. An API key of no customer in the key table is left alone: an `issue` may be
   * between its API Gateway step and its DynamoDB write. Idempotent.
   */
  async release(customers: CustomerSecrets[], now: number, progress: (line: string) => void = () => {}): Promise<MeteringRelease> {
    this.requirePool();
    const byCustomer = new Map(customers.map((found) => [found.customer.customerId, found]));
    const result: MeteringRelease = { released: 0, waiting: [] };
    for (const apiKey of (await this.perCustomerApiKeys()).values()) {
      const customerId = apiKey.name.slice(this.apiKeyName('').length);
      const found = byCustomer.get(customerId);
      const releasableAt = found && releasableAtOf(found, now);
      if (releasableAt === undefined) continue;
      if (releasableAt > now) {
        result.waiting.push({ keyId: customerId, releasableAt: new Date(releasableAt).toISOString() });
        continue;
      }
      await this.releaseApiKey(apiKey.id, customerId);
      result.released++;
      progress(`released API key ${apiKey.name} and its usage plan (${customerId}: ${releaseReason(found!, now)})`);
    }
    return result;
  }

  private async releaseApiKey(apiKeyId: string, keyId: string): Promise<void> {
    for (const plan of await this.plansOf(apiKeyId)) await this.removeFromPlan(apiKeyId, required(plan.id, 'usage plan without id'));
    await this.deleteApiKey(apiKeyId);
    const ownPlan = await this.findPlanByName(this.ownPlanName(keyId));
    if (ownPlan) await this.deleteUsagePlan(existingPlan(ownPlan));
  }

  private requirePool(): void {
    if (this.deployment.meteringKeysPerPlan === undefined) {
      throw new AdminError(
        `Stack ${this.deployment.stackName} has no pooled metering keys yet (output ${stackOutputNames.meteringKeysPerPlan}): deploy the current version (\`npx cdk deploy ${this.deployment.stackName}\`).`,
      );
    }
  }

  /** Every API key this tool named after a customer, by name (one paged listing, not one call per key). */
  private async perCustomerApiKeys(): Promise<Map<string, GatewayKey & { name: string }>> {
    const found = new Map<string, GatewayKey & { name: string }>();
    const prefix = this.apiKeyName('key_');
    let position: string | undefined;
    do {
      const page = await this.gateway.send(new GetApiKeysCommand({ nameQuery: prefix, includeValues: false, limit: 500, position }));
      for (const item of page.items ?? []) {
        if (item.id && item.name?.startsWith(prefix))
          found.set(item.name, { id: item.id, name: item.name, enabled: item.enabled ?? false });
      }
      position = page.position;
    } while (position);
    return found;
  }

  private async createOwnPlan(customer: MeteredCustomer, undo: Undo): Promise<string> {
    const limits = customer.limits;
    const derived = usagePlanLimits(limits);
    const { id } = await this.createUsagePlan({
      name: this.ownPlanName(customer.customerId),
      description: `Enterprise customer ${customer.customerId}: ${limits.perMinute} requests per minute, ${limits.perDay} per day (enforced exactly by the API; this is the backstop, a throttle with no quota: definitions/usage-plan-limits.ts).`,
      apiStages: [{ apiId: this.deployment.restApiId, stage: stageName }],
      throttle: { rateLimit: derived.rateLimit, burstLimit: derived.burstLimit },
    });
    const planId = required(id, 'CreateUsagePlan returned no id');
    undo.add(`delete usage plan ${this.ownPlanName(customer.customerId)}`, () => this.deleteUsagePlan({ id: planId, attached: true }));
    return planId;
  }

  private async createUsagePlan(input: CreateUsagePlanCommand['input']) {
    try {
      return await this.gateway.send(new CreateUsagePlanCommand(input));
    } catch (error) {
      if (error instanceof Error && error.name === 'LimitExceededException' && !/rate/i.test(error.message)) {
        throw new AdminError(
          `API Gateway refused another usage plan (${error.message}): the account has reached its usage plans per Region quota (300 by default; every Enterprise key takes one). Request an increase in Service Quotas (Amazon API Gateway, "Usage plans per account") and issue the key again.`,
        );
      }
      throw error;
    }
  }

  /** Sets a usage plan's throttle; with `undo`, adds the step that restores the one it had. */
  private async setThrottle(plan: UsagePlan, settings: UsagePlanSettings, undo?: Undo): Promise<void> {
    const planId = required(plan.id, 'usage plan without id');
    const patch = (values: { rateLimit?: number; burstLimit?: number }) =>
      this.gateway.send(
        new UpdateUsagePlanCommand({
          usagePlanId: planId,
          patchOperations: [
            { op: 'replace', path: '/throttle/rateLimit', value: String(values.rateLimit) },
            { op: 'replace', path: '/throttle/burstLimit', value: String(values.burstLimit) },
          ],
        }),
      );
    await patch(required(settings.throttle, 'a customer usage plan without a throttle'));
    undo?.add(`restore the limits of usage plan ${plan.name}`, async () => {
      await patch({ rateLimit: plan.throttle?.rateLimit, burstLimit: plan.throttle?.burstLimit });
    });
  }

  private async join(apiKeyId: string, usagePlanId: string, undo: Undo): Promise<void> {
    await this.gateway.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' }));
    undo.add(`remove API key ${apiKeyId} from usage plan ${usagePlanId}`, () => this.removeFromPlan(apiKeyId, usagePlanId));
  }

  private async leave(apiKeyId: string, usagePlanId: string, undo: Undo): Promise<void> {
    await this.removeFromPlan(apiKeyId, usagePlanId);
    undo.add(`add API key ${apiKeyId} to usage plan ${usagePlanId} again`, async () => {
      await this.gateway.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' }));
    });
  }

  private async removeFromPlan(apiKeyId: string, usagePlanId: string): Promise<void> {
    await ignoreNotFound(() => this.gateway.send(new DeleteUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId })));
  }

  private async setEnabled(apiKeyId: string, enabled: boolean): Promise<void> {
    await this.gateway.send(
      new UpdateApiKeyCommand({ apiKey: apiKeyId, patchOperations: [{ op: 'replace', path: '/enabled', value: String(enabled) }] }),
    );
  }

  private async deleteApiKey(apiKeyId: string): Promise<void> {
    await ignoreNotFound(() => this.gateway.send(new DeleteApiKeyCommand({ apiKey: apiKeyId })));
  }

  /** A usage plan can be deleted once detached from its stage. */
  private async deleteUsagePlan(plan: { id: string; attached: boolean }): Promise<void> {
    if (plan.attached) {
      await ignoreNotFound(() =>
        this.gateway.send(
          new UpdateUsagePlanCommand({
            usagePlanId: plan.id,
            patchOperations: [{ op: 'remove', path: '/apiStages', value: `${this.deployment.restApiId}:${stageName}` }],
          }),
        ),
      );
    }
    await ignoreNotFound(() => this.gateway.send(new DeleteUsagePlanCommand({ usagePlanId: plan.id })));
  }

  private async findApiKey(keyId: string): Promise<GatewayKey | undefined> {
    const name = this.apiKeyName(keyId);
    let position: string | undefined;
    do {
      // nameQuery matches by prefix: keep the exact name only.
      const page = await this.gateway.send(new GetApiKeysCommand({ nameQuery: name, includeValues: false, limit: 500, position }));
      const found = page.items?.find((item) => item.name === name);
      if (found?.id) return { id: found.id, enabled: found.enabled ?? false };
      position = page.position;
    } while (position);
    return undefined;
  }

  private async plansOf(apiKeyId: string): Promise<UsagePlan[]> {
    return this.usagePlans(apiKeyId);
  }

  private async findPlanByName(name: string): Promise<UsagePlan | undefined> {
    return (await this.usagePlans()).find((plan) => plan.name === name);
  }

  private async usagePlans(apiKeyId?: string): Promise<UsagePlan[]> {
    const found: UsagePlan[] = [];
    let position: string | undefined;
    do {
      const page = await this.gateway.send(new GetUsagePlansCommand({ keyId: apiKeyId, limit: 500, position }));
      found.push(...(page.items ?? []));
      position = page.position;
    } while (position);
    return found;
  }
}

/** How long the authorizer may keep returning a key's usageIdentifierKey after the key changed. */
const AUTHORIZER_CACHE_MS = authorizer.resultsCacheTtlSeconds * 1000;

/**
 * When a key's own API key may go: undefined while it meters a working
 * Enterprise key (or has nothing to do with this tool). A key moved to a fixed
 * plan: once every answer cached before the move has expired. A revoked key,
 * or a rotated one past its grace: at once (it answers 401 whatever meters it).
 */
function releasableAtOf({ customer, secrets }: CustomerSecrets, now: number): number | undefined {
  if (customer.plan !== 'enterprise') return Date.parse(customer.customerUpdatedAt) + AUTHORIZER_CACHE_MS;
  const ends = secrets.map(endOf);
  return ends.some((end) => end === undefined || end > now) ? undefined : Math.max(...(ends as number[]));
}

/** When a secret stopped working (revoked, or past its rotation's grace), if it did or will. */
function endOf(secret: Secret): number | undefined {
  if (secret.status === 'revoked') return Date.parse(secret.updatedAt);
  return secret.expiresAt !== undefined ? Date.parse(secret.expiresAt) : undefined;
}

function releaseReason({ customer, secrets }: CustomerSecrets, now: number): string {
  if (customer.plan !== 'enterprise') return `${plans[customer.plan].displayName} now, metered by the pool`;
  return secrets.every((secret) => secret.status === 'revoked')
    ? 'revoked'
    : `no working key since ${new Date(Math.min(now, ...secrets.map((s) => endOf(s) ?? now))).toISOString()}`;
}

/** A customer's own usage plan as API Gateway describes it: its throttle (it has no quota: createOwnPlan). */
function settingsOf(plan: UsagePlan): UsagePlanSettings {
  const { rateLimit, burstLimit } = plan.throttle ?? {};
  return rateLimit !== undefined && burstLimit !== undefined ? { throttle: { rateLimit, burstLimit } } : {};
}

function existingPlan(plan: UsagePlan): { id: string; attached: boolean } {
  return { id: required(plan.id, 'usage plan without id'), attached: (plan.apiStages ?? []).length > 0 };
}

function required<T>(value: T | undefined, message: string): T {
  if (value === undefined) throw new Error(message);
  return value;
}

async function ignoreNotFound(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof Error && error.name === 'NotFoundException') return;
    throw error;
  }
}
