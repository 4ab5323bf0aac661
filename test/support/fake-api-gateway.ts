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
  type PatchOperation,
  UpdateApiKeyCommand,
  UpdateUsagePlanCommand,
} from '@aws-sdk/client-api-gateway';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { UPDATE_USAGE_PLAN_INTERVAL_MS } from '../../admin/targets/aws';

/**
 * API Gateway's API keys and usage plans, as far as the key tool uses them,
 * recorded with aws-sdk-client-mock (API Gateway cannot run locally). It keeps
 * state like the service does, refuses what the service refuses (a key in two
 * usage plans of one stage, deleting a plan still attached to a stage), and
 * can be told to fail a given call: the tests check what the tool leaves behind.
 * Told the account's clock (enforceUpdateUsagePlanQuota), it also refuses
 * UpdateUsagePlan calls closer together than API Gateway's quota allows.
 */
export interface FakeApiKey {
  id: string;
  name: string;
  value: string;
  enabled: boolean;
}

export interface FakeUsagePlan {
  id: string;
  name: string;
  apiStages: { apiId: string; stage: string }[];
  throttle?: { rateLimit?: number; burstLimit?: number };
  quota?: { limit?: number; period?: string };
  keyIds: Set<string>;
}

export class FakeApiGateway {
  readonly mock: AwsClientStub<APIGatewayClient>;
  readonly apiKeys = new Map<string, FakeApiKey>();
  readonly usagePlans = new Map<string, FakeUsagePlan>();
  private readonly failures = new Map<string, { error: Error; times: number }>();
  private readonly handlers = new Map<string, (input: any) => object>();
  private nextId = 1;
  /** The account's clock and when it last accepted an UpdateUsagePlan, once the quota is enforced. */
  private updateUsagePlanQuota?: { now: () => number; lastAccepted?: number };

  /**
   * `log` hears the name of every call that changes something, in order.
   * Without a client it serves `call` only (test/support/fake-control-plane-server.ts
   * puts it behind HTTP for a child process).
   */
  constructor(
    client: APIGatewayClient = new APIGatewayClient({}),
    private readonly log: (command: string) => void = () => {},
  ) {
    this.mock = mockClient(client);
    this.handle(CreateApiKeyCommand, (input) => {
      if ([...this.apiKeys.values()].some((key) => key.value === input.value))
        throw serviceError('ConflictException', 'API key value already exists');
      const key = { id: this.id('ak'), name: input.name!, value: input.value!, enabled: input.enabled ?? false };
      this.apiKeys.set(key.id, key);
      return { id: key.id, name: key.name, enabled: key.enabled };
    });
    this.handle(GetApiKeysCommand, (input) => ({
      items: [...this.apiKeys.values()]
        .filter((key) => !input.nameQuery || key.name.startsWith(input.nameQuery))
        .map(({ id, name, enabled, value }) => ({ id, name, enabled, ...(input.includeValues ? { value } : {}) })),
    }));
    this.handle(UpdateApiKeyCommand, (input) => {
      const key = this.apiKey(input.apiKey!);
      for (const operation of input.patchOperations ?? []) {
        if (operation.op === 'replace' && operation.path === '/enabled') key.enabled = operation.value === 'true';
        else throw serviceError('BadRequestException', `unsupported patch ${operation.op} ${operation.path}`);
      }
      return { id: key.id, enabled: key.enabled };
    });
    this.handle(DeleteApiKeyCommand, (input) => {
      const key = this.apiKey(input.apiKey!);
      this.apiKeys.delete(key.id);
      for (const plan of this.usagePlans.values()) plan.keyIds.delete(key.id);
      return {};
    });
    this.handle(CreateUsagePlanCommand, (input) => {
      const plan: FakeUsagePlan = {
        id: this.id('up'),
        name: input.name!,
        apiStages: (input.apiStages ?? []).map((stage: { apiId?: string; stage?: string }) => ({
          apiId: stage.apiId!,
          stage: stage.stage!,
        })),
        throttle: input.throttle,
        quota: input.quota,
        keyIds: new Set(),
      };
      this.usagePlans.set(plan.id, plan);
      return this.describePlan(plan);
    });
    this.handle(UpdateUsagePlanCommand, (input) => {
      const plan = this.usagePlan(input.usagePlanId!);
      for (const operation of input.patchOperations ?? []) this.patchPlan(plan, operation);
      return this.describePlan(plan);
    });
    this.handle(DeleteUsagePlanCommand, (input) => {
      const plan = this.usagePlan(input.usagePlanId!);
      if (plan.apiStages.length > 0) throw serviceError('BadRequestException', 'Cannot delete a usage plan associated with API stages');
      this.usagePlans.delete(plan.id);
      return {};
    });
    this.handle(GetUsagePlansCommand, (input) => ({
      items: [...this.usagePlans.values()]
        .filter((plan) => !input.keyId || plan.keyIds.has(input.keyId))
        .map((plan) => this.describePlan(plan)),
    }));
    this.handle(CreateUsagePlanKeyCommand, (input) => {
      const plan = this.usagePlan(input.usagePlanId!);
      const key = this.apiKey(input.keyId!);
      const clash = [...this.usagePlans.values()].find(
        (other) =>
          other.keyIds.has(key.id) &&
          other.apiStages.some((stage) => plan.apiStages.some((mine) => mine.apiId === stage.apiId && mine.stage === stage.stage)),
      );
      if (clash) throw serviceError('ConflictException', `API key ${key.id} is in usage plan ${clash.id} on the same stage`);
      plan.keyIds.add(key.id);
      return { id: key.id, type: 'API_KEY', name: key.name };
    });
    this.handle(DeleteUsagePlanKeyCommand, (input) => {
      const plan = this.usagePlan(input.usagePlanId!);
      if (!plan.keyIds.delete(input.keyId!)) throw serviceError('NotFoundException', 'Invalid Usage Plan Key');
      return {};
    });
  }

  /** The stack's usage plans, as CloudFormation made them. */
  addStackPlan(id: string, name: string, apiId: string, stage: string): void {
    this.usagePlans.set(id, { id, name, apiStages: [{ apiId, stage }], keyIds: new Set() });
  }

  /** An API key in a usage plan, made by someone else than the tool: the stack's pooled keys, or the key tool before pooling. */
  addKey(name: string, value: string, usagePlanId: string): FakeApiKey {
    const key = { id: this.id('ak'), name, value, enabled: true };
    this.apiKeys.set(key.id, key);
    this.usagePlan(usagePlanId).keyIds.add(key.id);
    return key;
  }

  /**
   * The next call (or `times` calls) of this command fails with a service
   * error, changing nothing. By default one the key tool does not retry. A
   * ConflictException or TooManyRequestsException says what API Gateway says
   * when they are transient, unless `message` says otherwise.
   */
  failNext(command: { name: string }, name = 'BadRequestException', times = 1, message?: string): void {
    const text = message ?? transientMessages[name] ?? `${command.name.replace(/Command$/, '')} failed (injected)`;
    this.failures.set(command.name, { error: serviceError(name, text), times });
  }

  /**
   * From now on, UpdateUsagePlan as API Gateway allows it: one every 20 s per
   * account, not raisable ("Amazon API Gateway quotas",
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html);
   * a call sooner is refused with 429 TooManyRequestsException, changing
   * nothing, its Retry-After (the SDK's `retryAfterSeconds`) the seconds left.
   * A refused call does not count. `now` is the account's clock (a test's).
   */
  enforceUpdateUsagePlanQuota(now: () => number): void {
    this.updateUsagePlanQuota = { now };
  }

  /** UpdateUsagePlan calls refused by the quota so far. */
  updateUsagePlanRefusals = 0;

  /**
   * Whether API Gateway accepts this usageIdentifierKey on the stage: an
   * enabled API key with that value in a usage plan of the stage. Otherwise
   * it refuses the request (INVALID_API_KEY: our 401) after the authorizer's Allow.
   */
  meters(value: string, apiId: string, stage: string): boolean {
    const key = [...this.apiKeys.values()].find((candidate) => candidate.value === value);
    if (!key?.enabled) return false;
    return this.plansOf(key.id).some((plan) => plan.apiStages.some((mine) => mine.apiId === apiId && mine.stage === stage));
  }

  keyNamed(name: string): FakeApiKey | undefined {
    return [...this.apiKeys.values()].find((key) => key.name === name);
  }

  plansOf(apiKeyId: string): FakeUsagePlan[] {
    return [...this.usagePlans.values()].filter((plan) => plan.keyIds.has(apiKeyId));
  }

  planNamed(name: string): FakeUsagePlan | undefined {
    return [...this.usagePlans.values()].find((plan) => plan.name === name);
  }

  /** One call, by command name (e.g. `CreateApiKeyCommand`) and SDK input, as the service would answer it. */
  async call(commandName: string, input: unknown): Promise<object> {
    const run = this.handlers.get(commandName);
    if (!run) throw serviceError('BadRequestException', `${commandName} is not served by the fake`);
    if (!commandName.startsWith('Get')) this.log(commandName);
    if (commandName === UpdateUsagePlanCommand.name) this.spendUpdateUsagePlanQuota();
    const failure = this.failures.get(commandName);
    if (failure) {
      if (--failure.times <= 0) this.failures.delete(commandName);
      throw failure.error;
    }
    return run(input);
  }

  private spendUpdateUsagePlanQuota(): void {
    const quota = this.updateUsagePlanQuota;
    if (!quota) return;
    const now = quota.now();
    const left = quota.lastAccepted === undefined ? 0 : quota.lastAccepted + UPDATE_USAGE_PLAN_INTERVAL_MS - now;
    if (left > 0) {
      this.updateUsagePlanRefusals++;
      throw Object.assign(serviceError('TooManyRequestsException', transientMessages.TooManyRequestsException!, 429), {
        retryAfterSeconds: String(Math.ceil(left / 1000)),
      });
    }
    quota.lastAccepted = now;
  }

  private handle(command: { name: string }, run: (input: any) => object): void {
    // Each command has its own input and output types; the fake serves them all alike.
    this.handlers.set(command.name, run);
    this.mock.on(command as any).callsFake((input: unknown) => this.call(command.name, input));
  }

  private patchPlan(plan: FakeUsagePlan, operation: PatchOperation): void {
    const number = Number(operation.value);
    if (operation.op === 'remove' && operation.path === '/apiStages') {
      const [apiId, stage] = (operation.value ?? '').split(':');
      const before = plan.apiStages.length;
      plan.apiStages = plan.apiStages.filter((candidate) => !(candidate.apiId === apiId && candidate.stage === stage));
      if (plan.apiStages.length === before) throw serviceError('BadRequestException', 'API stage not in the usage plan');
    } else if (operation.op === 'replace' && operation.path === '/throttle/rateLimit')
      plan.throttle = { ...plan.throttle, rateLimit: number };
    else if (operation.op === 'replace' && operation.path === '/throttle/burstLimit')
      plan.throttle = { ...plan.throttle, burstLimit: number };
    else if (operation.op === 'replace' && operation.path === '/quota/limit') plan.quota = { ...plan.quota, limit: number };
    else throw serviceError('BadRequestException', `unsupported patch ${operation.op} ${operation.path}`);
  }

  private describePlan(plan: FakeUsagePlan) {
    return { id: plan.id, name: plan.name, apiStages: plan.apiStages, throttle: plan.throttle, quota: plan.quota };
  }

  private apiKey(id: string): FakeApiKey {
    const key = this.apiKeys.get(id);
    if (!key) throw serviceError('NotFoundException', 'Invalid API Key identifier specified');
    return key;
  }

  private usagePlan(id: string): FakeUsagePlan {
    const plan = this.usagePlans.get(id);
    if (!plan) throw serviceError('NotFoundException', 'Invalid Usage Plan ID specified');
    return plan;
  }

  private id(prefix: string): string {
    return `${prefix}${String(this.nextId++).padStart(6, '0')}`;
  }
}

export function serviceError(name: string, message: string, httpStatusCode = 400): Error {
  return Object.assign(new Error(message), { name, $fault: 'client', $metadata: { httpStatusCode } });
}

/**
 * What API Gateway says with its transient refusals: a concurrent modification
 * (quoted in https://github.com/hashicorp/terraform-provider-aws/issues/776)
 * and a throttled call.
 */
const transientMessages: Partial<Record<string, string>> = {
  ConflictException: 'Unable to complete operation due to concurrent modification. Please try again later.',
  TooManyRequestsException: 'Too Many Requests',
};
