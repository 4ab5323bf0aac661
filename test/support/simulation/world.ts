import type { PlanChoice } from '../../../admin/key-admin';
import type { TableName } from '../../../definitions/tables';
import { windowsAt } from '../../../functions/rate-limit/testing';
import { type AppliedCall, type FaultRates, SimulatedDynamoDB } from '../simulated-dynamodb';
import { FunctionInstance } from './actors/function-instance';
import { GATEWAY_CACHE_TTL_MS, Gateway } from './actors/gateway';
import { KeyTool, type Secret } from './actors/key-tool';
import type { AdminRecord, Answer, ClientView, Fault, UsageReport } from './client-view';

/**
 * The world one history runs in (after FoundationDB's simulation workloads:
 * a scenario sets it up, starts its clients and administrator, the world runs
 * them in virtual time, and the auditor checks what they saw). It owns the
 * clock, the event queue and the actors (workloads never reach the store):
 * the function instances with the real limiter, API Gateway with the real
 * authorizer, and the key tool, over one simulated DynamoDB whose pending
 * calls it applies in a seeded order. Virtual time jumps from one event to
 * the next, so a quiet quarter of an hour costs nothing.
 */

/** What a scenario decides before its history starts. */
export interface Setup {
  startMs: number;
  plan: PlanChoice;
  instances: { skewMs: number; frozen: { from: number; until: number }[] }[];
  faults: FaultRates;
  /** The share of requests the limiter lets through that are answered 503 all the same (their charge refunded). */
  share503: number;
  /** Whether such a 503 may be answered only after its instance served other requests (a create that hung): the refund finds its lease moved on. */
  lateRefunds: boolean;
  /** One line for a replay's steps. */
  description: string;
  /** What else the scenario drew, and its clients' state (a flood under way). */
  extra?: Record<string, unknown>;
}

/** A scenario: one file of workloads/ (scenarios.ts lists them). */
export interface Scenario {
  name: string;
  /** How often CI's seeds draw it, relative to the other scenarios' weights. */
  weight: number;
  setup(random: () => number): Setup;
  /** Schedules the clients' requests and the administrator's actions. */
  start(world: World): void;
  /** How the scenario's clients react to an answer (a stubborn client floods after a 429). */
  onAnswer?(answer: Answer, world: World): void;
}

export const tableNames: Record<TableName, string> = { pets: 'pets', apiKeys: 'keys', rateLimits: 'counters', idempotency: 'idempotency' };
/** A history's bound on requests: its cost. */
const MAX_REQUESTS = 400;
/** Virtual time within which the store answers the calls waiting on it. */
const STORE_ANSWERS_WITHIN_MS = 200;
/** How often, at most, the administrator asks `usage` while nothing is in flight. */
const USAGE_EVERY_MS = 60_000;
/** Real time a limiter may wait before retrying a TransactionConflictException (its backoff sleeps): beyond it the history fails. */
const MAX_REAL_WAIT_MS = 5_000;

type Event = { at: number; run: () => Promise<void> | void };

export interface RequestOptions {
  /** Which secret the client sends: its newest, or (during a rotation's grace) the one before. */
  secret?: 'newest' | 'older';
  /** Marks requests of a flood (a stubborn client's burst). */
  flood?: boolean;
}

export class World {
  now: number;
  readonly random: () => number;
  readonly store = new SimulatedDynamoDB(tableNames);
  readonly keyTool = new KeyTool(this.store, tableNames);
  readonly instances: FunctionInstance[] = [];
  readonly answers: Answer[] = [];
  readonly admin: AdminRecord[] = [];
  readonly usage: UsageReport[] = [];
  readonly faults: Fault[] = [];
  /** Lines of what happened, worded only when a history fails. */
  readonly steps: { at: number; request?: number; line: () => string }[] = [];
  readonly seen: Record<string, number> = {};
  requests = 0;
  private readonly gateway = new Gateway(this.store, tableNames, () => this.now);
  private readonly events: Event[] = [];
  private inFlight = 0;
  private lastUsageMs = Number.NEGATIVE_INFINITY;
  private customerId = '';
  private broken: unknown;

  constructor(
    readonly setup: Setup,
    random: () => number,
    private readonly scenario: Scenario,
    private readonly traceCalls: boolean,
  ) {
    this.random = random;
    this.now = setup.startMs;
  }

  get startMs(): number {
    return this.setup.startMs;
  }

  /** Runs the history to its end: every event, every pending call, every answer. */
  async run(): Promise<ClientView> {
    await this.begin();
    while (this.events.length > 0 || this.store.waiting > 0 || this.inFlight > 0) {
      await this.waitForRetries();
      if (this.store.waiting > 0 && (this.storeCallsDue() || this.random() < 0.6)) this.store.applyNext(this.random);
      else if (this.events.length > 0) await this.next();
      else if (this.instances.some((instance) => instance.retrying)) continue;
      else throw new Error('a request waits on nothing the simulation can resolve');
      await settled();
      if (this.broken !== undefined) throw this.broken;
      if (this.quiet() && this.now - this.lastUsageMs >= USAGE_EVERY_MS) await this.askUsage();
    }
    await this.askUsage();
    return this.view();
  }

  /** Runs `run` at `at` (virtual ms), after what is scheduled before it. */
  at(at: number, run: () => Promise<void> | void): void {
    let index = this.events.length;
    while (index > 0 && this.events[index - 1]!.at > at) index--;
    this.events.splice(index, 0, { at, run });
  }

  /** A client's request at `at`. */
  request(at: number, options: RequestOptions = {}): void {
    this.at(at, () => this.send(options, at));
  }

  /** The administrator changes the plan (to the same plan, the key tool answers that nothing changed). */
  setPlan(at: number, choice: PlanChoice): void {
    this.at(at, () =>
      this.administer('set-plan', async () => {
        const changed = await this.keyTool.setPlan(choice, this.now);
        if (changed.unchanged) return this.log(`key tool: set-plan ${describeChoice(choice)}: unchanged`);
        this.admin.push({ atMs: this.now, kind: 'set-plan', limits: changed.limits });
        this.saw(`set-plan ${choice.plan}`);
        this.log(`key tool: set-plan ${describeChoice(choice)}`);
      }),
    );
  }

  rotate(at: number, graceMs: number): void {
    this.at(at, () =>
      this.administer('rotate', async () => {
        const { old } = await this.keyTool.rotate(graceMs, this.now);
        this.admin.push({ atMs: this.now, kind: 'rotate', secret: old.label, graceEndMs: this.now + graceMs });
        this.saw('rotate');
        this.log(`key tool: rotate ${old.label}, grace ${Math.round(graceMs / 1000)} s`);
      }),
    );
  }

  /** Revokes the secret before the newest (if any), or the newest: the customer's last working one. */
  revoke(at: number, which: 'older' | 'newest'): void {
    this.at(at, () =>
      this.administer('revoke', async () => {
        const secret: Secret | undefined = which === 'newest' ? this.keyTool.newest : this.keyTool.secrets.at(-2);
        if (!secret) return;
        await this.keyTool.revoke(secret, this.now);
        this.admin.push({ atMs: this.now, kind: 'revoke', secret: secret.label });
        this.saw('revoke');
        this.log(`key tool: revoke ${secret.label}`);
      }),
    );
  }

  saw(what: string): void {
    this.seen[what] = (this.seen[what] ?? 0) + 1;
  }

  log(line: string | (() => string), request?: number): void {
    this.steps.push({ at: this.now, ...(request !== undefined ? { request } : {}), line: typeof line === 'string' ? () => line : line });
  }

  private async begin(): Promise<void> {
    const issued = await this.keyTool.issue(this.setup.plan, this.now);
    this.customerId = issued.customerId;
    this.admin.push({ atMs: this.now, kind: 'issue', limits: issued.limits });
    this.log(`issued ${describeChoice(this.setup.plan)}; ${this.setup.description}`);
    this.store.onApplied((call) => this.heard(call));
    this.setup.instances.forEach((spec, index) => {
      const id = `instance-${index + 1}`;
      const db = this.store.client({ name: id, mode: 'scheduled', faults: this.setup.faults, random: this.random });
      this.instances.push(new FunctionInstance(id, db, tableNames.rateLimits, spec.skewMs, spec.frozen));
      if (spec.frozen.length > 0) this.saw('frozen instance');
      this.log(
        `${id}: clock ${spec.skewMs >= 0 ? '+' : ''}${spec.skewMs} ms${spec.frozen.map((span) => `, frozen ${clock(span.from)}–${clock(span.until)}`).join('')}`,
      );
    });
    if (windowsAt(this.startMs).day !== windowsAt(this.startMs + 3_600_000).day) this.saw('midnight');
    this.scenario.start(this);
  }

  private async next(): Promise<void> {
    const event = this.events.shift()!;
    this.now = Math.max(this.now, event.at);
    await event.run();
  }

  private async administer(kind: string, action: () => Promise<void>): Promise<void> {
    try {
      await action();
    } catch (error) {
      if (!(error instanceof Error && error.name === 'AdminError')) throw error;
      this.log(`key tool refused ${kind}: ${error.message}`);
    }
  }

  /** One request: the gateway's (cached) authorizer answer, then a free instance's limiter, then maybe a 503 and its refund. */
  private async send(options: RequestOptions, at: number): Promise<void> {
    if (this.requests >= MAX_REQUESTS) return;
    const free = this.instances.filter((instance) => instance.reachableAt(this.now));
    const instance = free[Math.floor(this.random() * free.length)];
    if (!instance) {
      // Every instance is busy: the request waits for one (these are the customer's instances).
      if (this.inFlight > 0) this.request(this.now + 20, options);
      return;
    }
    const request = ++this.requests;
    const secret = options.secret === 'older' && this.keyTool.secrets.length > 1 ? this.keyTool.secrets.at(-2)! : this.keyTool.newest;
    instance.busy = true;
    this.inFlight++;
    this.serve(instance, request, secret, at).catch((error: unknown) => {
      this.broken ??= error;
    });
  }

  private async serve(instance: FunctionInstance, request: number, secret: Secret, sentMs: number): Promise<void> {
    const base = { request, secret: secret.label, sentMs };
    const gateway = await this.gateway.answer(secret.secret, this.now, this.random);
    if (gateway.kind !== 'allow') {
      const refusal =
        gateway.kind === 'denied'
          ? ({ status: 429, code: 'key_suspended', retryAfter: GATEWAY_CACHE_TTL_MS / 1000 } as const)
          : ({ status: 401 } as const);
      return this.answered(instance, { ...base, answeredMs: this.now, by: 'gateway', ...refusal });
    }
    const serverMs = instance.clock(sentMs);
    const outcome = await instance.decide(gateway, sentMs);
    const from = { ...base, by: instance.id, serverMs };
    if (outcome.kind === 'unavailable')
      return this.answered(instance, { ...from, answeredMs: this.now, status: 503, detail: outcome.detail });
    if (outcome.kind === 'unauthorized') return this.answered(instance, { ...from, answeredMs: this.now, status: 401 });
    if (outcome.kind === 'failed') return this.answered(instance, { ...from, answeredMs: this.now, status: 500, detail: outcome.detail });
    const { window, refusal, refund } = outcome.decision;
    const rateLimit = { limit: window.limit, remaining: window.remaining, reset: window.resetSeconds };
    if (refusal) {
      const retryAfter = refusal.retryAfterSeconds;
      return this.answered(instance, {
        ...from,
        answeredMs: this.now,
        status: 429,
        code: refusal.code,
        rateLimit,
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
    }
    if (this.random() >= this.setup.share503) return this.answered(instance, { ...from, answeredMs: this.now, status: 200, rateLimit });
    await this.answer503(instance, from, rateLimit, refund);
  }

  /** Served, then answered 503 after all (its pet could not be written): the refund, at once or after the instance served others. */
  private async answer503(
    instance: FunctionInstance,
    from: Omit<Answer, 'answeredMs' | 'status'>,
    rateLimit: Answer['rateLimit'],
    refund: () => Promise<boolean>,
  ): Promise<void> {
    const finish = async () => {
      const back = await refund();
      this.saw('refund');
      const remaining = rateLimit!.remaining + (back ? 1 : 0);
      this.record({ ...from, answeredMs: this.now, status: 503, refunded: true, rateLimit: { ...rateLimit!, remaining } });
    };
    if (!this.setup.lateRefunds || this.random() < 0.5) {
      await finish();
      return this.release(instance);
    }
    // A create that hung: its instance takes other requests meanwhile (the limiter allows it), and the refund comes later.
    this.saw('late refund');
    this.release(instance);
    this.inFlight++;
    // Not awaited by the world's loop: the refund queues behind the instance's current request, which the loop moves on.
    this.at(this.now + 1_000 + Math.floor(this.random() * 60_000), () => {
      finish()
        .catch((error: unknown) => {
          this.broken ??= error;
        })
        .finally(() => {
          instance.retrying = false;
          this.inFlight--;
        });
    });
  }

  private answered(instance: FunctionInstance, answer: Answer): void {
    this.record(answer);
    this.release(instance);
  }

  private release(instance: FunctionInstance): void {
    instance.busy = false;
    instance.retrying = false;
    this.inFlight--;
  }

  private record(answer: Answer): void {
    this.answers.push(answer);
    this.saw(
      answer.by === 'gateway'
        ? `gateway ${answer.status}${answer.code ? ` ${answer.code}` : ''}`
        : `${answer.status}${answer.code ? ` ${answer.code}` : ''}`,
    );
    this.log(() => describeAnswer(answer), answer.request);
    this.scenario.onAnswer?.(answer, this);
  }

  /** A call the store applied: its faults are the world's record (the auditor's slack); a conflict makes its instance wait for the retry. */
  private heard(call: AppliedCall): void {
    if (this.traceCalls) this.log(() => traceOf(call));
    if (!call.fault) return;
    this.saw(`store ${call.fault}`);
    const instance = this.instances.find((candidate) => candidate.id === call.channel);
    if (!instance) return;
    if (call.fault === 'transaction_conflict') instance.retrying = true;
    this.faults.push({ atMs: this.now, instance: instance.id, fault: call.fault, write: call.command !== 'Get' });
  }

  /**
   * A limiter that met TransactionConflictException sleeps (real time, under
   * a second) before its retry: nothing else moves meanwhile, so the order of
   * calls, and the history, stay the seed's.
   */
  private async waitForRetries(): Promise<void> {
    const started = Date.now();
    for (;;) {
      // Cleared when the retry is sent, or when the request (or a late refund) is answered.
      for (const instance of this.instances) if (this.store.pendingFrom(instance.id) > 0) instance.retrying = false;
      if (!this.instances.some((instance) => instance.retrying)) return;
      if (Date.now() - started > MAX_REAL_WAIT_MS) throw new Error('a limiter never retried after TransactionConflictException');
      await new Promise((resolve) => setTimeout(resolve, 1));
      await settled();
    }
  }

  /**
   * Whether the store must answer before the next event: DynamoDB answers
   * within a second (the functions' budget, docs/clients.md), so a quiet
   * spell never leaves a call waiting minutes of virtual time.
   */
  private storeCallsDue(): boolean {
    return this.events.length === 0 || this.events[0]!.at - this.now > STORE_ANSWERS_WITHIN_MS;
  }

  private quiet(): boolean {
    return this.inFlight === 0 && this.store.waiting === 0;
  }

  /** The key tool's `usage` of every day of the history so far, with nothing in flight. */
  private async askUsage(): Promise<void> {
    this.lastUsageMs = this.now;
    const days = new Set([windowsAt(this.startMs).day, windowsAt(this.now).day]);
    for (const day of await this.keyTool.usage(2, this.now)) {
      if (days.has(day.day)) this.usage.push({ atMs: this.now, afterAnswers: this.answers.length, day: day.day, requests: day.requests });
    }
  }

  private view(): ClientView {
    const maxSkewMs = Math.max(0, ...this.instances.map((instance) => Math.abs(instance.skewMs)));
    const used = new Set(this.answers.filter((answer) => answer.by !== 'gateway').map((answer) => answer.by));
    return {
      answers: this.answers,
      admin: this.admin,
      usage: this.usage,
      faults: this.faults,
      instances: Math.max(1, used.size),
      maxSkewMs,
      lateRefunds: this.setup.lateRefunds,
    };
  }

  /** The customer the history's counters belong to (for a replay's trace only). */
  get customer(): string {
    return this.customerId;
  }
}

export function describeChoice(choice: PlanChoice): string {
  return choice.customLimits ? `${choice.plan} ${choice.customLimits.perMinute}/min ${choice.customLimits.perDay}/day` : choice.plan;
}

function describeAnswer(answer: Answer): string {
  const headers = answer.rateLimit
    ? `, Limit ${answer.rateLimit.limit}, Remaining ${answer.rateLimit.remaining}, Reset ${clock(answer.rateLimit.reset * 1000)}`
    : '';
  const retry = answer.retryAfter !== undefined ? `, Retry-After ${answer.retryAfter}` : '';
  const server = answer.serverMs !== undefined ? ` (its clock ${clock(answer.serverMs)})` : '';
  return `#${answer.request} ${answer.secret} sent ${clock(answer.sentMs)} → ${answer.by}${server}: ${answer.status}${answer.code ? ` ${answer.code}` : ''}${answer.refunded ? ' (refunded)' : ''}${headers}${retry}${answer.detail ? ` — ${answer.detail}` : ''}`;
}

export function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

function traceOf(call: AppliedCall): string {
  const item = call.item ? ` → ${JSON.stringify(call.item)}` : '';
  return `  store call ${call.seq} ${call.channel} ${call.command} ${String(call.input.TableName)}: ${call.outcome}${call.fault ? ` (${call.fault})` : ''}${item}`;
}

/** Lets every promise chain the last step resumed run until it waits on the store again. */
function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
