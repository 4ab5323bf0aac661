import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { issueKey, keyUsage, type PlanChoice, revokeKey, rotateKey, setPlan } from '../../admin/key-admin';
import { localTarget } from '../../admin/targets/local';
import type { PlanLimits, PlanName } from '../../definitions/plans';
import { authorizer } from '../../definitions/routes';
import type { TableName } from '../../definitions/tables';
import { createHandler } from '../../functions/authorizer/handler';
import { limitsOf } from '../../functions/customers';
import { ApiError, DependencyUnavailableError } from '../../functions/domain/errors';
import { CounterTable, RateLimiter } from '../../functions/rate-limit';
import { counterKey, windowsAt } from '../../functions/rate-limit/testing';
import { requestAuthorizerEvent } from './api-gateway-events';
import { InvariantBroken, invariants, iso, Truth } from './customer-simulation-invariants';
import { type AppliedCall, type FaultRates, noFaults, SimulatedDynamoDB } from './simulated-dynamodb';

/**
 * A deterministic simulation of one customer over a few minutes, after
 * TigerBeetle's VOPR and FoundationDB's simulation testing: the real limiter
 * (one RateLimiter per function instance), the real authorizer behind API
 * Gateway's cache of its answers, and the real key tool (issue, set-plan,
 * rotate, revoke), all over one in-memory DynamoDB (simulated-dynamodb.ts).
 * One seed draws everything: the plan and its changes, the instances, their
 * clocks (skewed, some frozen a while), the requests and their 503s, the
 * store's faults and the order in which it applies the instances' pending
 * calls. So races are real and a failing seed replays exactly. The checks,
 * after every step, are customer-simulation-invariants.ts's.
 */

export interface HistoryResult {
  seed: number;
  requests: number;
  served: number;
  planChanges: number;
  /** How often each answer and fault came: what the history exercised (429 codes, 401, 503, refunds, the store's faults). */
  seen: Record<string, number>;
  failure?: { invariant: string; message: string; steps: string[] };
}

/** mulberry32: a small seeded generator; the simulation never calls Math.random. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const tableNames: Record<TableName, string> = { pets: 'pets', apiKeys: 'keys', rateLimits: 'counters', idempotency: 'idempotency' };
const TTL_MS = authorizer.resultsCacheTtlSeconds * 1000;
const STEPS_KEPT = 40;
const MAX_REQUESTS = 400;

/** What one decision of the limiter says: its reported window, its refusal if any, and its refund. */
type Decision = Awaited<ReturnType<RateLimiter['admit']>>;

/**
 * The harness's only use of the limiter: one per instance, and one call per
 * request. If the limiter's API changes, this is what changes.
 */
const limiterAdapter = {
  create: (db: ReturnType<SimulatedDynamoDB['client']>, instanceId: string, warn: (message: string) => void) =>
    new RateLimiter(new CounterTable(db, tableNames.rateLimits), (message) => warn(message), { instanceId }),
  decide: (limiter: RateLimiter, caller: { keyId: string; customerId: string; limits: PlanLimits }, nowMs: number): Promise<Decision> =>
    limiter.admit({ keyId: caller.keyId, customerId: caller.customerId, limits: caller.limits }, nowMs),
};

interface Instance {
  id: string;
  limiter: RateLimiter;
  skewMs: number;
  frozen: { from: number; until: number }[];
  busy: boolean;
  /** The calls the store applied for the request being served here. */
  calls?: AppliedCall[];
}

interface Secret {
  label: string;
  keyId: string;
  secret: string;
}

type Gateway = { kind: 'allow'; limits: PlanLimits; keyId: string; customerId: string } | { kind: 'unauthorized' } | { kind: 'denied' };

type Event = { at: number; kind: 'request'; flood?: boolean } | { at: number; kind: 'admin'; action: AdminAction };
type AdminAction =
  | { kind: 'set-plan'; choice: PlanChoice }
  | { kind: 'rotate'; graceMs: number }
  | { kind: 'revoke-old' }
  | { kind: 'revoke-all' };

/** Runs the history of one seed; a failure carries the last `stepsKept` steps before it. */
export async function runHistory(seed: number, options: { stepsKept?: number; traceCalls?: boolean } = {}): Promise<HistoryResult> {
  const world = new World(seed, options.stepsKept ?? STEPS_KEPT, options.traceCalls ?? false);
  try {
    await world.run();
  } catch (error) {
    const broken =
      error instanceof InvariantBroken
        ? error
        : new InvariantBroken(invariants.neverA500, `the simulation itself failed: ${describe(error)}`);
    return { ...world.result(), failure: { invariant: broken.invariant, message: broken.message, steps: world.steps } };
  }
  return world.result();
}

class World {
  private readonly stepsKept: (() => string)[] = [];
  private readonly random: () => number;
  private readonly store = new SimulatedDynamoDB(tableNames);
  private readonly admin = this.store.client({ name: 'key-tool', mode: 'immediate' });
  private readonly target = localTarget(this.admin, tableNames, { name: 'simulation' });
  private readonly authorize = createHandler(
    { db: this.store.client({ name: 'authorizer', mode: 'immediate' }), tableNames, clock: () => this.now },
    undefined,
  );
  private readonly instances: Instance[] = [];
  private readonly events: Event[] = [];
  private readonly gatewayCache = new Map<string, { at: number; answer: Gateway }>();
  private readonly refundsByMinute = new Map<number, number>();
  private readonly refundsByDay = new Map<string, number>();
  private secrets: Secret[] = [];
  private currentChoice!: PlanChoice;
  private truth!: Truth;
  private customerId = '';
  private now = 0;
  private startMs = 0;
  private endMs = 0;
  private requests = 0;
  private servedCount = 0;
  private planChanges = 0;
  private readonly seen: Record<string, number> = {};
  private stubborn = false;
  /** A flood under way: refusals during it start no other. */
  private floodingUntil = 0;
  private faults: FaultRates = noFaults;
  /** What a request running on its own found broken: run() rethrows it at once. */
  private broken: unknown;

  constructor(
    private readonly seed: number,
    private readonly stepsToKeep: number,
    /** Every call the store applies is a step too (a replay's detail). */
    private readonly traceCalls: boolean,
  ) {
    this.random = seededRandom(seed);
  }

  result(): HistoryResult {
    return { seed: this.seed, requests: this.requests, served: this.servedCount, planChanges: this.planChanges, seen: this.seen };
  }

  async run(): Promise<void> {
    await this.setUp();
    while (this.events.length > 0 || this.store.waiting > 0 || this.instances.some((instance) => instance.busy)) {
      if (this.store.waiting > 0 && (this.events.length === 0 || this.random() < 0.6)) {
        this.store.applyNext(this.random);
      } else if (this.events.length > 0) {
        await this.handle(this.events.shift()!);
      }
      await settled();
      if (this.broken !== undefined) throw this.broken;
      if (this.events.length === 0 && this.store.waiting === 0 && this.instances.some((instance) => instance.busy)) {
        throw new Error('a request waits on nothing the simulation can resolve');
      }
      this.checkUsageWhenQuiet();
    }
    await this.checkUsageWithTheKeyTool();
    if (this.planChanges === 0) throw new InvariantBroken(invariants.everyHistoryChangesPlan, 'no set-plan changed the plan');
  }

  /** The customer, the instances, the faults and the schedule, all drawn from the seed. */
  private async setUp(): Promise<void> {
    const crossesMidnight = this.random() < 0.25;
    if (crossesMidnight) this.saw('midnight');
    const day = Date.parse('2026-03-02T00:00:00Z') + Math.floor(this.random() * 200) * 86_400_000;
    this.now = crossesMidnight ? day - 90_000 - Math.floor(this.random() * 60_000) : day + Math.floor(this.random() * 80_000_000);
    this.startMs = this.now;
    this.endMs = this.now + 70_000 + Math.floor(this.random() * 110_000);
    this.faults = this.random() < 0.5 ? { throttle: 0.01, lostAnswer: 0.01, sdkRetry: 0.5, late: 0.01 } : noFaults;
    this.stubborn = this.random() < 0.4;
    const choice = this.planChoice();
    this.currentChoice = choice;
    const issued = await issueKey(this.target, { ...choice, owner: 'Simulated customer' }, this.now);
    this.secrets = [{ label: 'secret 1', keyId: issued.key.keyId, secret: issued.secret }];
    this.customerId = issued.key.keyId;
    this.truth = new Truth(issued.key.limits);
    this.store.onApplied((call) => this.heard(call));
    this.log(
      `issued ${describeChoice(choice)}; ${this.faults === noFaults ? 'no faults' : 'faults on'}; ${this.stubborn ? 'a client that floods after 429s' : 'a client that backs off'}`,
    );
    this.addInstances();
    this.scheduleTraffic();
    this.scheduleAdmin();
  }

  private addInstances(): void {
    const count = 2 + Math.floor(this.random() * 5);
    for (let index = 1; index <= count; index++) {
      const id = `instance-${index}`;
      const skewMs = index === 1 ? 0 : Math.round((this.random() * 2 - 1) * (this.random() < 0.5 ? 20 : 1_000));
      const frozen = this.random() < 0.3 ? [this.freezeSpan()] : [];
      if (frozen.length > 0) this.saw('frozen instance');
      const db = this.store.client({ name: id, mode: 'scheduled', faults: this.faults, random: this.random });
      const limiter = limiterAdapter.create(db, id, () => {});
      this.instances.push({ id, limiter, skewMs, frozen, busy: false });
      this.log(
        `${id}: clock ${skewMs >= 0 ? '+' : ''}${skewMs} ms${frozen.map((span) => `, frozen ${this.at(span.from)}–${this.at(span.until)}`).join('')}`,
      );
    }
  }

  private freezeSpan(): { from: number; until: number } {
    const from = this.now + Math.floor(this.random() * (this.endMs - this.now));
    return { from, until: from + 10_000 + Math.floor(this.random() * 60_000) };
  }

  /** Requests in phases of 10 to 30 s, each at its own rate, some phases busy enough for leases with spare. */
  private scheduleTraffic(): void {
    const rates = [0.2, 0.5, 1, 2, 6];
    let at = this.now;
    while (at < this.endMs) {
      const phaseEnd = Math.min(this.endMs, at + 5_000 + this.random() * 20_000);
      const perSecond = rates[Math.floor(this.random() * rates.length)]!;
      while (at < phaseEnd) {
        at += Math.max(1, Math.round(-Math.log(1 - this.random()) * (1000 / perSecond)));
        if (at < phaseEnd) this.events.push({ at, kind: 'request' });
      }
      at = phaseEnd;
    }
  }

  /** At least one plan change; maybe more, a rotation, a revocation of the old secret, and rarely of the last one. */
  private scheduleAdmin(): void {
    // Plan changes and rotations before the last 25 s, where a revocation of the last secret may come.
    const moment = () => this.now + Math.floor(this.random() * (this.endMs - 25_000 - this.now));
    const actions: Event[] = [{ at: moment(), kind: 'admin', action: { kind: 'set-plan', choice: this.planChoice() } }];
    for (let extra = Math.floor(this.random() * 3); extra > 0; extra--) {
      actions.push({ at: moment(), kind: 'admin', action: { kind: 'set-plan', choice: this.planChoice() } });
    }
    if (this.random() < 0.4) {
      const rotation = moment();
      actions.push({ at: rotation, kind: 'admin', action: { kind: 'rotate', graceMs: Math.floor(this.random() * 90_000) } });
      if (this.random() < 0.5)
        actions.push({ at: rotation + Math.floor(this.random() * 60_000), kind: 'admin', action: { kind: 'revoke-old' } });
    }
    if (this.random() < 0.1)
      actions.push({ at: this.endMs - Math.floor(this.random() * 20_000), kind: 'admin', action: { kind: 'revoke-all' } });
    for (const action of actions) this.enqueue(action);
  }

  private enqueue(event: Event): void {
    let at = this.events.length;
    while (at > 0 && this.events[at - 1]!.at > event.at) at--;
    this.events.splice(at, 0, event);
  }

  private planChoice(): PlanChoice {
    const plans: PlanName[] = ['free', 'pro', 'business', 'enterprise'];
    const plan = plans[Math.floor(this.random() * plans.length)]!;
    if (plan !== 'enterprise') return { plan };
    const perMinute = [5, 10, 20, 40, 60, 120, 600][Math.floor(this.random() * 7)]!;
    return { plan, customLimits: { perMinute, perDay: perMinute * [1, 2, 5, 20][Math.floor(this.random() * 4)]! } };
  }

  private async handle(event: Event): Promise<void> {
    this.now = Math.max(this.now, event.at);
    if (event.kind === 'admin') return this.administer(event.action);
    if (this.requests >= MAX_REQUESTS) return;
    const instance = this.freeInstance();
    if (!instance) {
      // Every instance is busy: the request waits for one (Lambda would start another; these are the customer's instances).
      if (this.instances.some((candidate) => candidate.busy)) this.enqueue({ ...event, at: this.now + 20 });
      return;
    }
    this.requests++;
    this.request(instance, this.requests, event.flood === true).catch((error: unknown) => {
      this.broken ??= error;
    });
  }

  private freeInstance(): Instance | undefined {
    const free = this.instances.filter(
      (instance) => !instance.busy && !instance.frozen.some((span) => span.from <= this.now && this.now < span.until),
    );
    return free[Math.floor(this.random() * free.length)];
  }

  /** One request: the gateway's (cached) authorizer answer, then the operation's limiter, then maybe a 503 and its refund. */
  private async request(instance: Instance, id: number, flood: boolean): Promise<void> {
    instance.busy = true;
    const secret = this.secretToSend();
    const nowMs = this.now + instance.skewMs;
    const gateway = await this.gateway(secret);
    if (gateway.kind !== 'allow') {
      this.saw(gateway.kind === 'denied' ? 'gateway 429 key_suspended' : 'gateway 401');
      this.log(`#${id} ${secret.label} → gateway ${gateway.kind === 'denied' ? '429 key_suspended' : '401'}`);
      instance.busy = false;
      return;
    }
    instance.calls = [];
    let decision: Decision;
    try {
      decision = await limiterAdapter.decide(instance.limiter, gateway, nowMs);
    } catch (error) {
      this.undecided(instance, id, secret, error, nowMs);
      return;
    }
    const calls = instance.calls;
    instance.calls = undefined;
    await this.decided(instance, { id, secret, nowMs, flood, decision, calls });
    instance.busy = false;
  }

  private secretToSend(): Secret {
    const newest = this.secrets.at(-1)!;
    return this.secrets.length > 1 && this.random() < 0.2 ? this.secrets.at(-2)! : newest;
  }

  /** API Gateway's cache of the authorizer's answers: the real authorizer at most once per TTL per secret. */
  private async gateway(secret: Secret): Promise<Gateway> {
    const cached = this.gatewayCache.get(secret.secret);
    if (cached && this.now - cached.at < TTL_MS) return cached.answer;
    // The first answer of a history may have been cached a while before it started.
    const at = cached ? this.now : this.now - Math.floor(this.random() * TTL_MS);
    const answer = await this.authorizerAnswer(secret);
    this.gatewayCache.set(secret.secret, { at, answer });
    return answer;
  }

  private async authorizerAnswer(secret: Secret): Promise<Gateway> {
    const event = requestAuthorizerEvent({
      method: 'GET',
      resource: '/pets',
      path: '/pets',
      headers: { Authorization: `Bearer ${secret.secret}` },
    });
    let result: APIGatewayAuthorizerResult;
    try {
      result = await this.authorize(event);
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') return { kind: 'unauthorized' };
      throw error;
    }
    if (result.policyDocument.Statement[0]?.Effect === 'Deny') return { kind: 'denied' };
    const context = result.context ?? {};
    return {
      kind: 'allow',
      keyId: String(context.keyId),
      customerId: String(context.customerId),
      limits: { perMinute: Number(context.perMinute), perDay: Number(context.perDay) },
    };
  }

  /** The limiter threw: a 503 (dependency failure) or a 401 (revoked or expired) are answers; anything else is a 500. */
  private undecided(instance: Instance, id: number, secret: Secret, error: unknown, nowMs: number): void {
    instance.calls = undefined;
    instance.busy = false;
    this.saw(error instanceof DependencyUnavailableError ? '503' : error instanceof ApiError ? String(error.code) : '500');
    if (error instanceof DependencyUnavailableError) {
      this.log(`#${id} ${instance.id} → 503 (${describe(error.cause)})`);
      return;
    }
    if (error instanceof ApiError && error.code === 'unauthorized') {
      this.log(`#${id} ${instance.id} ${secret.label} → 401`);
      if (!this.secretStopped(secret, nowMs)) {
        throw new InvariantBroken(
          invariants.refusalsTellTheTruth,
          `#${id} was answered 401 though ${secret.label} is neither revoked nor expired`,
        );
      }
      return;
    }
    this.log(`#${id} ${instance.id} → 500: ${describe(error)}`);
    throw new InvariantBroken(invariants.neverA500, `request #${id} on ${instance.id} would be answered 500: ${describe(error)}`);
  }

  private secretStopped(secret: Secret, nowMs: number): boolean {
    const stored = this.store.item(tableNames.apiKeys, { keyHash: hashOf(this.store, secret.keyId) });
    // The limiter compares whole seconds (the expiry mark on the counter item is in Unix seconds).
    const expired = typeof stored?.expiresAt === 'string' && Math.floor(Date.parse(stored.expiresAt) / 1000) <= Math.floor(nowMs / 1000);
    return stored?.status === 'revoked' || expired;
  }

  private async decided(instance: Instance, request: DecidedRequest): Promise<void> {
    const { id, decision, calls, nowMs } = request;
    const deciding = decidingCall(calls, !decision.refusal);
    const limits = deciding ? this.truth.limitsAt(deciding.seq) : undefined;
    const what = decision.refusal ? `429 ${decision.refusal.code}` : 'served';
    this.log(
      () =>
        `#${id} ${instance.id} ${request.secret.label} at ${iso(nowMs / 1000)} → ${what}, Limit ${decision.window.limit}, Remaining ${decision.window.remaining}${deciding ? ` (store call ${deciding.seq})` : ''}`,
    );
    if (!deciding || !limits) throw new InvariantBroken(invariants.neverA500, `request #${id} was decided with no call to the store`);
    this.saw(decision.refusal ? `429 ${decision.refusal.code}` : 'served');
    if (decision.refusal) return this.refused(request, deciding, limits);
    const minute = Number(deciding.item?.minuteStart);
    const day = String(deciding.item?.day);
    this.servedCount++;
    this.truth.served(id, deciding.seq, minute, day);
    this.checkRemaining(request, deciding.seq, limits, minute, day);
    if (this.random() < 0.04) await this.answer503(instance, id, decision, minute, day);
  }

  /** The request is served, then answered 503 (its pet could not be written): its charge goes back. */
  private async answer503(instance: Instance, id: number, decision: Decision, minute: number, day: string): Promise<void> {
    instance.calls = undefined;
    // Answered 503 from the moment the handler decides so: never charged, whenever its refund lands.
    this.truth.refunded(id, minute, day);
    this.refundsByMinute.set(minute, (this.refundsByMinute.get(minute) ?? 0) + 1);
    this.refundsByDay.set(day, (this.refundsByDay.get(day) ?? 0) + 1);
    const refunded = await decision.refund();
    this.saw('refund');
    this.log(`#${id} ${instance.id} answered 503 after all; refund ${refunded ? 'went back' : 'outcome unknown'}`);
  }

  /** X-RateLimit-Remaining is never above what is left of the reported window, and its Limit is the limit in force. */
  private checkRemaining(request: DecidedRequest, seq: number, limits: PlanLimits, minute: number, day: string): void {
    const { window } = request.decision;
    const windows = windowsAt(request.nowMs);
    // In a day's last minute both windows end together: the Limit tells which was reported.
    const isMinute = window.resetSeconds !== windows.dayEnd || (windows.minuteEnd === windows.dayEnd && window.limit === limits.perMinute);
    const limit = isMinute ? limits.perMinute : limits.perDay;
    const left = limit - (isMinute ? this.truth.servedInMinute(minute, seq) : this.truth.servedInDay(day, seq));
    if (window.limit !== limit) {
      throw new InvariantBroken(
        invariants.remainingNeverAboveTruth,
        `#${request.id} reported X-RateLimit-Limit ${window.limit}, the limit in force being ${limit}`,
      );
    }
    if (window.remaining > left) {
      throw new InvariantBroken(
        invariants.remainingNeverAboveTruth,
        `#${request.id} reported Remaining ${window.remaining} of the ${isMinute ? 'minute' : 'day'}, ${left} being left`,
      );
    }
  }

  /** A 429 says why, truly: the minute or the day used up (within the documented bound), or a ban recorded. */
  private refused(request: DecidedRequest, deciding: AppliedCall, limits: PlanLimits): void {
    const code = request.decision.refusal!.code;
    const windows = windowsAt(request.nowMs);
    if (code === 'rate_limited') this.checkMinuteUsedUp(request, windows.minuteStart, Number(deciding.item?.minuteStart ?? 0), limits);
    else if (code === 'quota_exceeded') this.checkDayUsedUp(request, windows.day, limits);
    else if (code === 'key_suspended') this.checkSuspended(request, windows.day);
    else throw new InvariantBroken(invariants.refusalsTellTheTruth, `#${request.id} was refused with the unknown code ${code}`);
    if (this.stubborn && request.decision.refusal!.retryAfterSeconds !== undefined) this.flood();
  }

  private checkMinuteUsedUp(request: DecidedRequest, clockMinute: number, itemMinute: number, limits: PlanLimits): void {
    const cap = (minute: number) => this.truth.largestSpareCapDuring(minute * 1000, (minute + 60) * 1000);
    const usedUp = (minute: number) =>
      this.truth.servedInMinute(minute) >=
      limits.perMinute - cap(minute) - this.truth.faultSlackOfMinute(minute) - (this.refundsByMinute.get(minute) ?? 0);
    if (usedUp(clockMinute) || usedUp(itemMinute)) return;
    throw new InvariantBroken(
      invariants.refusalsTellTheTruth,
      `#${request.id} was refused rate_limited with ${this.truth.servedInMinute(clockMinute)} served in the minute ${iso(clockMinute)} of a limit of ${limits.perMinute} (bound: a tenth of the largest limit in force in it, ${cap(clockMinute)})`,
    );
  }

  private checkDayUsedUp(request: DecidedRequest, day: string, limits: PlanLimits): void {
    const bound = this.truth.largestSpareCap() + this.truth.faultSlackOfDay(day) + (this.refundsByDay.get(day) ?? 0);
    const served = this.truth.servedInDay(day);
    if (served >= limits.perDay - bound) return;
    throw new InvariantBroken(
      invariants.usageWithinBound,
      `#${request.id} was refused quota_exceeded with ${served} served on ${day} of a limit of ${limits.perDay} (bound: ${bound})`,
    );
  }

  /** A ban recorded on the day's item, or on the day before's (a ban crossing midnight: the instance remembers it). */
  private checkSuspended(request: DecidedRequest, day: string): void {
    const dayBefore = windowsAt(request.nowMs - 86_400_000).day;
    const until = Math.max(
      ...[day, dayBefore].map((each) =>
        Number(this.store.item(tableNames.rateLimits, { pk: counterKey(this.customerId, each) })?.bannedUntil ?? 0),
      ),
    );
    if (until * 1000 > request.nowMs) return;
    throw new InvariantBroken(invariants.refusalsTellTheTruth, `#${request.id} was refused key_suspended with no ban recorded`);
  }

  /** A client that keeps calling after its 429s: a burst right away (the ban rule's case). */
  private flood(): void {
    if (this.now < this.floodingUntil) return;
    const burst = Math.min(40, this.truth.limitsAt(this.store.seq).perMinute);
    for (let index = 0; index < burst; index++) this.enqueue({ at: this.now + 1 + index * 25, kind: 'request', flood: true });
    this.floodingUntil = this.now + 1 + burst * 25;
  }

  private async administer(action: AdminAction): Promise<void> {
    const working = this.secrets.at(-1)!;
    try {
      if (action.kind === 'set-plan') await this.changePlan(working, action.choice);
      else if (action.kind === 'rotate') await this.rotate(working, action.graceMs);
      else if (action.kind === 'revoke-old') await this.revoke(this.secrets.length > 1 ? this.secrets.at(-2)! : undefined);
      else await this.revoke(working);
    } catch (error) {
      if (!(error instanceof Error && error.name === 'AdminError')) throw error;
      this.log(`key tool refused ${action.kind}: ${error.message}`);
    }
  }

  private async changePlan(working: Secret, drawn: PlanChoice): Promise<void> {
    let choice = drawn;
    // A history's plan changes: a choice that is the plan already is drawn again.
    while (sameChoice(choice, this.currentChoice)) choice = this.planChoice();
    const changed = await setPlan(this.target, working.keyId, choice, this.now);
    if (changed.unchanged) return;
    this.planChanges++;
    this.saw(`set-plan ${choice.plan}`);
    this.currentChoice = choice;
    this.truth.changed(this.store.seq, limitsOf(choice), this.now);
    this.log(`key tool: set-plan ${describeChoice(choice)} (store call ${this.store.seq})`);
  }

  private async rotate(working: Secret, graceMs: number): Promise<void> {
    const rotated = await rotateKey(this.target, working.keyId, graceMs, this.now);
    this.saw('rotate');
    this.secrets.push({ label: `secret ${this.secrets.length + 1}`, keyId: rotated.successor.keyId, secret: rotated.secret });
    this.log(`key tool: rotate ${working.label}, grace ${Math.round(graceMs / 1000)} s`);
  }

  private async revoke(secret: Secret | undefined): Promise<void> {
    if (!secret) return;
    await revokeKey(this.target, secret.keyId, this.now);
    this.saw('revoke');
    this.log(`key tool: revoke ${secret.label}`);
  }

  /** A call the store applied: the instance serving a request hears of its own; faulted counter writes widen the bounds. */
  private heard(call: AppliedCall): void {
    if (this.traceCalls) this.log(() => traceOf(call));
    if (call.fault) this.saw(`store ${call.fault}`);
    const instance = this.instances.find((candidate) => candidate.id === call.channel);
    if (!instance) return;
    if (call.fault === 'throttle' || call.fault === 'held_back' || call.fault === 'lost_answer') {
      this.truth.faulted(call, (minute) => windowsAt(minute * 1000).day);
    }
    if (call.fault !== 'late') instance.calls?.push(call);
  }

  /** With nothing in flight, the day's count is what was answered, plus at most the bound. */
  private checkUsageWhenQuiet(): void {
    if (this.store.waiting > 0 || this.instances.some((instance) => instance.busy)) return;
    for (const day of this.daysSoFar()) {
      const usage = Number(this.store.item(tableNames.rateLimits, { pk: counterKey(this.customerId, day) })?.dayGranted ?? 0);
      this.checkUsage(day, usage);
    }
  }

  private checkUsage(day: string, usage: number): void {
    const answered = this.truth.servedInDay(day);
    const bound = this.truth.largestSpareCap() + this.truth.faultSlackOfDay(day) + (this.refundsByDay.get(day) ?? 0);
    if (answered <= usage && usage <= answered + bound) return;
    throw new InvariantBroken(
      invariants.usageWithinBound,
      `usage of ${day} is ${usage} for ${answered} requests answered (bound: ${bound} more)`,
    );
  }

  /** The key tool's `usage`, at the end: the same figures. */
  private async checkUsageWithTheKeyTool(): Promise<void> {
    const report = await keyUsage(this.target, this.secrets[0]!.keyId, 2, this.now);
    for (const day of report.days) if (this.daysSoFar().includes(day.day)) this.checkUsage(day.day, day.requests);
  }

  private daysSoFar(): string[] {
    const first = windowsAt(this.startMs).day;
    const last = windowsAt(this.now).day;
    return first === last ? [last] : [first, last];
  }

  private saw(what: string): void {
    this.seen[what] = (this.seen[what] ?? 0) + 1;
  }

  /** Steps are worded only when a history fails: most never are. */
  private log(line: string | (() => string)): void {
    const at = this.now;
    this.stepsKept.push(() => `${this.at(at)} ${typeof line === 'string' ? line : line()}`);
    if (this.stepsKept.length > this.stepsToKeep) this.stepsKept.shift();
  }

  get steps(): string[] {
    return this.stepsKept.map((step) => step());
  }

  private at(ms: number): string {
    return new Date(ms).toISOString().slice(11, 23);
  }
}

interface DecidedRequest {
  id: number;
  secret: Secret;
  nowMs: number;
  flood: boolean;
  decision: Decision;
  calls: AppliedCall[];
}

/**
 * The store call that decided a request: for a served one, the lease write
 * that applied (its grant served it), else the read it was served from spare
 * after (its first); for a refusal, the last read or lease write it saw.
 */
function decidingCall(calls: AppliedCall[], served: boolean): AppliedCall | undefined {
  const onCounters = calls.filter((call) => call.input.TableName === tableNames.rateLimits && (call.command === 'Get' || isLease(call)));
  if (served) {
    const grant = onCounters.filter((call) => call.command === 'Update' && call.outcome === 'ok').at(-1);
    if (grant) return grant;
    // Served from spare: the read before it (a later read only looks at whether a give-back landed).
    return onCounters.find((call) => call.command === 'Get' && call.outcome === 'ok');
  }
  return onCounters.filter((call) => call.fault === undefined || call.fault === 'sdk_retry').at(-1);
}

function isLease(call: AppliedCall): boolean {
  return call.command === 'Update' && takeOf(call) > 0;
}

function takeOf(call: AppliedCall): number {
  const take = (call.input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':take'];
  return typeof take === 'number' ? take : 0;
}

function hashOf(store: SimulatedDynamoDB, keyId: string): string {
  return String(store.lookUp(tableNames.apiKeys, 'keyId', keyId)?.keyHash ?? '');
}

function traceOf(call: AppliedCall): string {
  const input = call.input;
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const take =
    values?.[':take'] !== undefined
      ? ` take ${String(values[':take'])} spare ${String(values[':spare'] ?? values[':spareDelta'])} seq ${String(values[':seq'] ?? '')}`
      : '';
  const item = call.item
    ? ` → minute ${String(call.item.minuteStart)} granted ${String(call.item.minuteGranted)} day ${String(call.item.dayGranted)} spare ${String(call.item.spare)} leases ${JSON.stringify(call.item.leases ?? {})}`
    : '';
  return `  store call ${call.seq} ${call.channel} ${call.command} ${String(input.TableName)}${take}: ${call.outcome}${call.fault ? ` (${call.fault})` : ''}${item}`;
}

function sameChoice(a: PlanChoice, b: PlanChoice): boolean {
  return a.plan === b.plan && a.customLimits?.perMinute === b.customLimits?.perMinute && a.customLimits?.perDay === b.customLimits?.perDay;
}

function describeChoice(choice: PlanChoice): string {
  return choice.customLimits ? `${choice.plan} ${choice.customLimits.perMinute}/min ${choice.customLimits.perDay}/day` : choice.plan;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Lets every promise chain the last step resumed run until it waits on the store again. */
function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
