import { BAN_DURATION_SECONDS, type PlanLimits } from '../../../definitions/plans';
import { authorizer } from '../../../definitions/routes';
import type { AdminRecord, Answer, ClientView } from './client-view';

/**
 * The auditor of the customer simulation (after TigerBeetle's auditor.zig):
 * each promise of docs/clients.md once, quoted as written, checked from what
 * the clients and the administrator saw (status, code, X-RateLimit-*,
 * Retry-After, the server's Date, the key tool's answers and `usage`) and
 * the bounds the docs give. It knows nothing of how the limiter stores its
 * counts. Where the clock of the answering instance may put a request in one
 * of two windows, only what is certain is judged (a request counts in minute
 * M for sure when M is the only minute its instance's clock, and the item's,
 * could have been in while it was decided).
 */
export const promises = {
  neverA500: {
    name: 'never a 500',
    says: 'every operation answers `503 service_unavailable` with `Retry-After` instead of hanging — never a `500`',
  },
  servedWithinLimits: {
    name: 'served within the limits in force',
    says: 'A key is never served past its limits.',
  },
  refusedOnlyWhenUsedUp: {
    name: 'a 429 comes only when the window is used up, within the bound',
    says: 'a `429` may come while allowance is left, by at most **a tenth of the per-minute limit**',
  },
  banStartsAtTheNthRefusal: {
    name: 'the ban starts at the N-th refusal and lifts on time',
    says: "its **N-th refused request within one UTC minute, N being its per-minute limit** (another full minute's worth), starts a **15-minute suspension**. That request and every one until the end, across midnight too, get `429 key_suspended`, `Retry-After` counting down to the end; the suspension lifts by itself. With several instances it may start up to a tenth of N refusals per instance later (and a tenth more for each record of refusals DynamoDB did not answer), never earlier",
  },
  remainingExactWithOneInstance: {
    name: 'Remaining is exact with one instance',
    says: 'While one server instance serves a key, `X-RateLimit-Remaining` is exact and the key is served its whole window.',
  },
  remainingWithinATenth: {
    name: 'Remaining is never above the truth, and at most a tenth low with several instances',
    says: "When a key's requests are spread over many instances at once, Remaining may be lower than the truth",
  },
  retryAfterTrue: {
    name: 'Retry-After and the X-RateLimit-* of a 429 are true',
    says: "`rate_limited`: the minute is used up; `Retry-After` reaches to the minute's end.",
  },
  gatewayRefusalsTrue: {
    name: 'every gateway refusal and 401 has a true reason',
    says: "API Gateway may answer for us: the same Error object with `Retry-After: 300` and no `X-RateLimit-*`; waiting it out is never refused past the suspension's end.",
  },
  usageWithinTheDaysBound: {
    name: "usage and the day stay within that day's own bound",
    says: 'the same for the day (`quota_exceeded`, and `usage` above the answers; on a day the plan changed in, a tenth of the larger limit',
  },
} as const;

export type PromiseKey = keyof typeof promises;

export interface Finding {
  promise: string;
  message: string;
  /** The request whose answer broke it, if one did. */
  request?: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const BAN_MS = BAN_DURATION_SECONDS * 1000;
const GATEWAY_RETRY_AFTER = authorizer.resultsCacheTtlSeconds;
/** Store faults whose caller never heard the write's outcome (the SDK's own retry heard it). */
const UNHEARD_FAULTS = new Set(['throttle', 'held_back', 'lost_answer']);

/** What the docs bound: a tenth of the per-minute limit. */
function tenth(limits: PlanLimits): number {
  return Math.floor(limits.perMinute / 10);
}

const minuteOf = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS;
const dayOf = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const charged = (answer: Answer) => answer.status === 200;
/** Let through by the limiter: served, or answered 503 after (a refund that may not have reached the minute). */
const letThrough = (answer: Answer) => answer.status === 200 || answer.refunded === true;
const fromFunction = (answer: Answer) => answer.by !== 'gateway' && answer.serverMs !== undefined;

/** Judges one history's client view; the first finding of each promise broken. */
export function audit(view: ClientView): Finding[] {
  const auditor = new Auditor(view);
  const findings: Finding[] = [];
  for (const [key, check] of Object.entries(auditor.checks) as [PromiseKey, () => Omit<Finding, 'promise'> | undefined][]) {
    const found = check();
    if (found) findings.push({ promise: promises[key].name, ...found });
  }
  return findings;
}

type Check = () => Omit<Finding, 'promise'> | undefined;

/** A window a served answer's headers may describe; `plans`: how many limits were in force in it. */
interface ReportedWindow {
  name: 'minute' | 'day';
  limit: number;
  plans: number;
  contains: (other: Answer) => boolean;
}

class Auditor {
  private readonly answers: Answer[];
  private readonly functionAnswers: Answer[];
  private readonly limitChanges: { atMs: number; limits: PlanLimits }[];
  private readonly skew: number;
  /** One instance, a store that never failed, refunds at once: where the docs promise exactness. */
  private readonly exact: boolean;
  private readonly bans: { firstAnswered: number; firstServerMs: number; untilMs: number; request: number }[];

  readonly checks: Record<PromiseKey, Check> = {
    neverA500: () => this.neverA500(),
    servedWithinLimits: () => this.servedWithinLimits(),
    refusedOnlyWhenUsedUp: () => this.refusedOnlyWhenUsedUp(),
    banStartsAtTheNthRefusal: () => this.banStartsAtTheNthRefusal(),
    remainingExactWithOneInstance: () => this.remainingExactWithOneInstance(),
    remainingWithinATenth: () => this.remainingWithinATenth(),
    retryAfterTrue: () => this.retryAfterTrue(),
    gatewayRefusalsTrue: () => this.gatewayRefusalsTrue(),
    usageWithinTheDaysBound: () => this.usageWithinTheDaysBound(),
  };

  constructor(private readonly view: ClientView) {
    this.answers = [...view.answers].sort((a, b) => a.answeredMs - b.answeredMs || a.request - b.request);
    this.functionAnswers = this.answers.filter(fromFunction);
    this.limitChanges = view.admin
      .filter((record): record is Extract<AdminRecord, { limits: PlanLimits }> => 'limits' in record)
      .map((record) => ({ atMs: record.atMs, limits: record.limits }));
    this.skew = view.maxSkewMs;
    this.exact = view.instances === 1 && view.faults.length === 0 && !view.lateRefunds && view.maxSkewMs === 0;
    this.bans = this.bansSeen();
  }

  // ---- what the clients saw, arranged ----

  /** The limits that may have decided a request: in force when it was sent, and any change before its answer. */
  private candidateLimits(answer: Pick<Answer, 'sentMs' | 'answeredMs'>): PlanLimits[] {
    const before = this.limitChanges.filter((change) => change.atMs < answer.sentMs).at(-1) ?? this.limitChanges[0]!;
    const during = this.limitChanges.filter((change) => change.atMs >= answer.sentMs && change.atMs <= answer.answeredMs);
    return [before.limits, ...during.map((change) => change.limits)];
  }

  private unambiguousLimits(answer: Answer): PlanLimits | undefined {
    const candidates = this.candidateLimits(answer);
    return candidates.length === 1 ? candidates[0] : undefined;
  }

  /** The limits in force at any moment of [fromMs, toMs). */
  private limitsDuring(fromMs: number, toMs: number): PlanLimits[] {
    return this.limitChanges
      .filter((change, index) => change.atMs < toMs && (this.limitChanges[index + 1]?.atMs ?? Number.POSITIVE_INFINITY) > fromMs)
      .map((change) => change.limits);
  }

  /** The minutes a function's answer may count in: from its instance's clock at sending to the latest clock by its answer. */
  private minutesOf(answer: Answer): { first: number; last: number } {
    // One instance: the counters' minute is its own clock's (no other clock ever moved them on).
    if (this.view.instances === 1) return { first: minuteOf(answer.serverMs!), last: minuteOf(answer.serverMs!) };
    return { first: minuteOf(answer.serverMs!), last: minuteOf(answer.answeredMs + this.skew) };
  }

  private certainMinute(answer: Answer): number | undefined {
    const { first, last } = this.minutesOf(answer);
    return first === last ? first : undefined;
  }

  private mayCountIn(answer: Answer, minute: number): boolean {
    const { first, last } = this.minutesOf(answer);
    return first <= minute && minute <= last;
  }

  /** Store faults of the function instances between two instants: what the docs' bounds may have to absorb. */
  private faultsDuring(fromMs: number, toMs: number, kinds?: Set<string>): number {
    return this.view.faults.filter(
      (fault) => fault.write && fault.atMs >= fromMs && fault.atMs < toMs && (!kinds || kinds.has(fault.fault)),
    ).length;
  }

  /** Bans as clients saw them: the function's 429 key_suspended, grouped by the end their X-RateLimit-Reset names. */
  private bansSeen(): { firstAnswered: number; firstServerMs: number; untilMs: number; request: number }[] {
    const bans: { firstAnswered: number; firstServerMs: number; untilMs: number; request: number }[] = [];
    for (const answer of this.functionAnswers) {
      if (answer.code !== 'key_suspended' || !answer.rateLimit) continue;
      const untilMs = answer.rateLimit.reset * 1000;
      const known = bans.find((ban) => Math.abs(ban.untilMs - untilMs) <= 1_000 + 2 * this.skew);
      if (!known) bans.push({ firstAnswered: answer.answeredMs, firstServerMs: answer.serverMs!, untilMs, request: answer.request });
    }
    return bans;
  }

  // ---- the promises ----

  private neverA500(): ReturnType<Check> {
    const failed = this.answers.find((answer) => answer.status === 500);
    return failed && { request: failed.request, message: `#${failed.request} was answered 500: ${failed.detail}` };
  }

  /** In every minute and day, the requests served, counted where they surely count, against the limits that decided them. */
  private servedWithinLimits(): ReturnType<Check> {
    const windows = [
      { name: 'minute', of: (answer: Answer) => this.certainMinute(answer), limit: (limits: PlanLimits) => limits.perMinute },
      { name: 'day', of: (answer: Answer) => dayOf(answer.serverMs!), limit: (limits: PlanLimits) => limits.perDay },
    ];
    for (const window of windows) {
      const served = new Map<number, Answer[]>();
      for (const answer of this.functionAnswers.filter(charged)) {
        const start = window.of(answer);
        if (start !== undefined) served.set(start, [...(served.get(start) ?? []), answer]);
      }
      for (const [start, answers] of served) {
        const largest = Math.max(...answers.flatMap((answer) => this.candidateLimits(answer).map(window.limit)));
        if (answers.length > largest) {
          const last = answers.at(-1)!;
          return {
            request: last.request,
            message: `${answers.length} requests were served in the ${window.name} from ${iso(start)}, whose largest limit in force was ${largest} (the last: #${last.request})`,
          };
        }
        for (const answer of answers) {
          const limits = this.unambiguousLimits(answer);
          if (!limits) continue;
          const before = answers.filter((other) => other.answeredMs < answer.sentMs).length;
          if (before >= window.limit(limits)) {
            return {
              request: answer.request,
              message: `#${answer.request} was served with ${before} requests of its ${window.name} (from ${iso(start)}) answered before it was sent, its limit being ${window.limit(limits)}`,
            };
          }
        }
      }
    }
    return undefined;
  }

  /** A rate_limited or quota_exceeded answer: its window had served its limit, less the docs' bound. */
  private refusedOnlyWhenUsedUp(): ReturnType<Check> {
    for (const answer of this.functionAnswers) {
      if (answer.code === 'rate_limited') {
        const { first, last } = this.minutesOf(answer);
        const usedUp = [first, last].some((minute) => this.minuteUsedUp(answer, minute));
        if (!usedUp)
          return {
            request: answer.request,
            message: `#${answer.request} was refused rate_limited in the minute from ${iso(first)} with ${this.letThroughIn(answer, (other) => this.mayCountIn(other, first))} let through (bound: ${this.minuteBound(first)})`,
          };
      } else if (answer.code === 'quota_exceeded') {
        const day = dayOf(answer.serverMs!);
        const through = this.letThroughIn(answer, (other) => dayOf(other.serverMs!) === day);
        const limit = Math.min(...this.candidateLimits(answer).map((limits) => limits.perDay));
        const bound = this.dayBound(day, answer.answeredMs);
        if (through < limit - bound)
          return {
            request: answer.request,
            message: `#${answer.request} was refused quota_exceeded on ${iso(day).slice(0, 10)} with ${through} let through of a limit of ${limit} (bound: ${bound})`,
          };
      }
    }
    return undefined;
  }

  private minuteUsedUp(answer: Answer, minute: number): boolean {
    const limit = Math.min(...this.candidateLimits(answer).map((limits) => limits.perMinute));
    return this.letThroughIn(answer, (other) => this.mayCountIn(other, minute)) >= limit - this.minuteBound(minute);
  }

  /** Requests let through that may count in the window and may have been decided before `answer`. */
  private letThroughIn(answer: Answer, inWindow: (other: Answer) => boolean): number {
    return this.functionAnswers.filter((other) => letThrough(other) && other.sentMs <= answer.answeredMs && inWindow(other)).length;
  }

  /** What the docs allow a minute to hold back: nothing with one instance; a tenth of the largest limit in force, and what the store's unheard writes kept. */
  private minuteBound(minute: number): number {
    const limits = this.limitsDuring(minute - this.skew, minute + MINUTE_MS + this.skew);
    // "the same in the minute of a change": exact only under one plan.
    if (this.exact && limits.length === 1) return 0;
    const cap = Math.max(...limits.map(tenth));
    return cap + this.faultsDuring(minute - 1_000, minute + MINUTE_MS + 1_000, UNHEARD_FAULTS) * (cap + 1);
  }

  /**
   * The same for a day, up to `untilMs`: its own limits' tenth, never another
   * day's. `usage` counts what instances hold too, so only a refusal or a
   * Remaining is exact with one instance.
   */
  private dayBound(day: number, untilMs: number, exactWithOneInstance = true): number {
    const limits = this.limitsDuring(day, Math.min(day + DAY_MS, untilMs + 1));
    if (this.exact && exactWithOneInstance && limits.length === 1) return 0;
    const cap = Math.max(...limits.map(tenth));
    return cap + this.faultsDuring(day - 1_000, day + DAY_MS, UNHEARD_FAULTS) * (cap + 1);
  }

  /** The ban: started by the N-th refusal of a minute (a tenth of N per instance later with several), never before, for 15 minutes, nothing served during it. */
  private banStartsAtTheNthRefusal(): ReturnType<Check> {
    return this.banNotLate() ?? this.banNotEarly() ?? this.banLastsItsTime();
  }

  private banNotLate(): ReturnType<Check> {
    const refusals = new Map<number, Answer[]>();
    for (const answer of this.functionAnswers) {
      if (answer.status !== 429) continue;
      const minute = this.certainMinute(answer);
      if (minute !== undefined) refusals.set(minute, [...(refusals.get(minute) ?? []), answer]);
    }
    for (const [minute, answers] of refusals) {
      if (this.faultsDuring(minute - 1_000, minute + MINUTE_MS + 1_000) > 0) continue;
      if (this.bans.some((ban) => ban.firstAnswered < minute)) continue;
      const n = Math.max(...this.limitsDuring(minute - this.skew, minute + MINUTE_MS + this.skew).map((limits) => limits.perMinute));
      const slack = this.exact ? 0 : this.view.instances * Math.ceil(n / 10);
      const beforeBan = answers.findIndex((answer) => answer.code === 'key_suspended');
      const refusedFirst = beforeBan < 0 ? answers.length : beforeBan;
      if (refusedFirst >= n + slack) {
        const late = answers[n + slack - 1]!;
        return {
          request: late.request,
          message: `#${late.request} was the ${n + slack}th refusal of the minute from ${iso(minute)} (N = ${n}, slack ${slack}) and no ban had started`,
        };
      }
    }
    return undefined;
  }

  private banNotEarly(): ReturnType<Check> {
    for (const ban of this.bans) {
      const first = this.functionAnswers.find((answer) => answer.request === ban.request)!;
      const minutes = this.minutesOf(first);
      const refused = this.functionAnswers.filter(
        (answer) =>
          answer.status === 429 &&
          answer.code !== 'key_suspended' &&
          answer.answeredMs <= first.answeredMs &&
          [minutes.first, minutes.last].some((minute) => this.mayCountIn(answer, minute)),
      ).length;
      const n = Math.min(...this.limitsDuring(minutes.first - this.skew, minutes.last + MINUTE_MS).map((limits) => limits.perMinute));
      if (refused + 1 < n)
        return { request: first.request, message: `#${first.request} started a ban after ${refused} refusals of its minute (N = ${n})` };
    }
    return undefined;
  }

  private banLastsItsTime(): ReturnType<Check> {
    const tolerance = 1_000 + 2 * this.skew;
    for (const ban of this.bans) {
      // Its first answer may have waited on the store while another instance wrote the ban: the start lies between its minute and its answer.
      const start = ban.untilMs - BAN_MS;
      if (start > ban.firstAnswered + tolerance || start < minuteOf(ban.firstServerMs - this.skew) - MINUTE_MS) {
        return {
          request: ban.request,
          message: `#${ban.request} (its clock ${iso(ban.firstServerMs)}, answered ${iso(ban.firstAnswered)}) told of a ban ending ${iso(ban.untilMs)}: not ${BAN_DURATION_SECONDS} s after it started`,
        };
      }
      const servedDuring = this.functionAnswers.find(
        (answer) => answer.status === 200 && answer.sentMs > ban.firstAnswered && answer.serverMs! < ban.untilMs - tolerance,
      );
      if (servedDuring)
        return {
          request: servedDuring.request,
          message: `#${servedDuring.request} was served during the ban that ends ${iso(ban.untilMs)}`,
        };
    }
    const afterEnd = this.answers.find(
      (answer) =>
        answer.code === 'key_suspended' &&
        !this.bans.some(
          (ban) =>
            (answer.serverMs ?? answer.answeredMs) < ban.untilMs + (answer.by === 'gateway' ? this.skew : 0) &&
            answer.answeredMs >= ban.firstAnswered,
        ),
    );
    return (
      afterEnd && {
        request: afterEnd.request,
        message: `#${afterEnd.request} was answered key_suspended by ${afterEnd.by} with no ban in force (bans: ${this.bans.map((ban) => `${iso(ban.firstAnswered)}–${iso(ban.untilMs)}`).join(', ') || 'none'})`,
      }
    );
  }

  /** One instance, no fault: Remaining is the limit less every request served in its window, exactly. */
  private remainingExactWithOneInstance(): ReturnType<Check> {
    if (!this.exact) return undefined;
    for (const answer of this.functionAnswers.filter(charged)) {
      const limits = this.unambiguousLimits(answer);
      if (!limits || !answer.rateLimit) continue;
      const windows = this.reportedWindows(answer, limits);
      if (windows.length === 0)
        return {
          request: answer.request,
          message: `#${answer.request} reported Limit ${answer.rateLimit.limit}, Reset ${iso(answer.rateLimit.reset * 1000)}: neither window of the limits in force`,
        };
      // "on a day the plan changed in, a tenth of the larger limit; the same in the minute of a change": exact only under one plan.
      const underOnePlan = windows.filter((window) => window.plans === 1);
      if (underOnePlan.length < windows.length) continue;
      const left = windows.map((window) => {
        const used = this.functionAnswers.filter(
          (other) => charged(other) && other.request <= answer.request && window.contains(other),
        ).length;
        return { window, exact: Math.max(0, window.limit - used) };
      });
      if (!left.some(({ exact }) => exact === answer.rateLimit!.remaining)) {
        return {
          request: answer.request,
          message: `#${answer.request} reported Remaining ${answer.rateLimit.remaining}, ${left.map(({ window, exact }) => `${exact} being left of its ${window.name}`).join(' or ')}`,
        };
      }
    }
    return undefined;
  }

  /**
   * Which window a served answer's headers may describe, by its Reset and
   * Limit under the limits in force: both, in a day's last minute when the
   * two limits are equal.
   */
  private reportedWindows(answer: Answer, limits: PlanLimits): ReportedWindow[] {
    const { limit, reset } = answer.rateLimit!;
    const minute = minuteOf(answer.serverMs!);
    const day = dayOf(answer.serverMs!);
    const windows: ReportedWindow[] = [];
    const plans = (from: number, to: number) => this.limitsDuring(from, to).length;
    if (reset * 1000 === minute + MINUTE_MS && limit === limits.perMinute) {
      windows.push({
        name: 'minute',
        limit,
        plans: plans(minute, minute + MINUTE_MS),
        contains: (other) => this.certainMinute(other) === minute,
      });
    }
    if (reset * 1000 === day + DAY_MS && limit === limits.perDay) {
      windows.push({ name: 'day', limit, plans: plans(day, answer.answeredMs + 1), contains: (other) => dayOf(other.serverMs!) === day });
    }
    return windows;
  }

  /** Every served answer: Limit the limit in force; Remaining at most what is left, and at most a tenth of the per-minute limit below it. */
  private remainingWithinATenth(): ReturnType<Check> {
    for (const answer of this.functionAnswers.filter(charged)) {
      const limits = this.unambiguousLimits(answer);
      if (!limits || !answer.rateLimit || this.certainMinute(answer) === undefined) continue;
      const windows = this.reportedWindows(answer, limits);
      if (windows.length === 0)
        return {
          request: answer.request,
          message: `#${answer.request} reported Limit ${answer.rateLimit.limit}, Reset ${iso(answer.rateLimit.reset * 1000)}: neither window of the limits in force (${limits.perMinute}/min, ${limits.perDay}/day)`,
        };
      const judged = windows.map((window) => this.remainingJudged(answer, window));
      if (judged.every((wrong) => wrong !== undefined)) return { request: answer.request, message: judged.join('; or ') };
    }
    return undefined;
  }

  private remainingJudged(answer: Answer, window: ReportedWindow): string | undefined {
    const remaining = answer.rateLimit!.remaining;
    const servedBefore = this.functionAnswers.filter(
      (other) => charged(other) && other.answeredMs < answer.sentMs && window.contains(other),
    ).length;
    const most = Math.max(0, window.limit - servedBefore - 1);
    if (remaining > most) return `#${answer.request} reported Remaining ${remaining} of its ${window.name}, at most ${most} being left`;
    const minute = minuteOf(answer.serverMs!);
    const inWindow = (other: Answer) => (window.name === 'minute' ? this.mayCountIn(other, minute) : window.contains(other));
    const mayBeUsed = this.functionAnswers.filter(
      (other) => letThrough(other) && other.sentMs <= answer.answeredMs && inWindow(other),
    ).length;
    const bound = window.name === 'minute' ? this.minuteBound(minute) : this.dayBound(dayOf(answer.serverMs!), answer.answeredMs);
    const least = Math.max(0, window.limit - mayBeUsed - bound);
    if (remaining < least)
      return `#${answer.request} reported Remaining ${remaining} of its ${window.name}, at least ${least} being left (bound: ${bound})`;
    return undefined;
  }

  /** A function's 429: Retry-After to the end of the window it names, its headers that window's. */
  private retryAfterTrue(): ReturnType<Check> {
    for (const answer of this.answers.filter((each) => each.status === 429)) {
      const wrong = answer.by === 'gateway' ? this.gatewayRetryAfterWrong(answer) : this.functionRetryAfterWrong(answer);
      if (wrong) return { request: answer.request, message: `#${answer.request} (${answer.code} by ${answer.by}): ${wrong}` };
    }
    return undefined;
  }

  private gatewayRetryAfterWrong(answer: Answer): string | undefined {
    if (answer.rateLimit) return 'a gateway answer carries X-RateLimit-*';
    return answer.retryAfter === GATEWAY_RETRY_AFTER ? undefined : `Retry-After ${answer.retryAfter}, not ${GATEWAY_RETRY_AFTER}`;
  }

  private functionRetryAfterWrong(answer: Answer): string | undefined {
    const server = answer.serverMs!;
    const candidates = this.candidateLimits(answer);
    const headers = answer.rateLimit;
    if (!headers || answer.retryAfter === undefined) return 'no X-RateLimit-* or Retry-After';
    const end =
      answer.code === 'rate_limited'
        ? minuteOf(server) + MINUTE_MS
        : answer.code === 'quota_exceeded'
          ? dayOf(server) + DAY_MS
          : headers.reset * 1000;
    const limitOf = (limits: PlanLimits) => (answer.code === 'quota_exceeded' ? limits.perDay : limits.perMinute);
    const retryAfter = Math.max(1, Math.ceil((end - server) / 1000));
    if (answer.code === 'key_suspended' && end <= server) return `Reset ${iso(end)} is not after its own clock ${iso(server)}`;
    if (headers.reset * 1000 !== end) return `Reset ${iso(headers.reset * 1000)}, the window ending ${iso(end)}`;
    if (answer.retryAfter !== retryAfter) return `Retry-After ${answer.retryAfter}, ${retryAfter} being true`;
    if (headers.remaining !== 0) return `Remaining ${headers.remaining} on a 429`;
    if (!candidates.some((limits) => limitOf(limits) === headers.limit))
      return `Limit ${headers.limit}, not a limit in force (${candidates.map(limitOf).join(' or ')})`;
    return undefined;
  }

  /** A 401 for a secret revoked or past its grace; a gateway's 429 within a ban clients were told of; no secret served after its revocation. */
  private gatewayRefusalsTrue(): ReturnType<Check> {
    for (const answer of this.answers) {
      if (answer.status === 401 && !this.secretStopped(answer)) {
        return {
          request: answer.request,
          message: `#${answer.request} was answered 401 by ${answer.by} though ${answer.secret} was neither revoked nor past its grace`,
        };
      }
      if (
        answer.status === 429 &&
        answer.by === 'gateway' &&
        !this.bans.some((ban) => ban.firstAnswered <= answer.answeredMs && answer.answeredMs < ban.untilMs + this.skew)
      ) {
        return {
          request: answer.request,
          message: `#${answer.request} was refused key_suspended at the gateway at ${iso(answer.answeredMs)} with no ban in force (bans: ${this.bans.map((ban) => `${iso(ban.firstAnswered)}–${iso(ban.untilMs)}`).join(', ') || 'none'})`,
        };
      }
      if (answer.status === 200 && this.revokedBefore(answer.secret, answer.sentMs)) {
        return { request: answer.request, message: `#${answer.request} was served with ${answer.secret}, revoked before it was sent` };
      }
    }
    return undefined;
  }

  /** Revoked by the time it was answered, or past its grace by the clock that judged it (the instance's, or the authorizer's). */
  private secretStopped(answer: Answer): boolean {
    const clock = answer.serverMs ?? answer.answeredMs;
    return this.view.admin.some(
      (record) =>
        (record.kind === 'revoke' && record.secret === answer.secret && record.atMs <= answer.answeredMs) ||
        (record.kind === 'rotate' && record.secret === answer.secret && Math.floor(record.graceEndMs / 1000) * 1000 <= clock + 1_000),
    );
  }

  private revokedBefore(secret: string, atMs: number): boolean {
    return this.view.admin.some((record) => record.kind === 'revoke' && record.secret === secret && record.atMs < atMs);
  }

  /** The key tool's usage of a day, asked with nothing in flight: at least what was answered, at most that day's bound above it. */
  private usageWithinTheDaysBound(): ReturnType<Check> {
    for (const report of this.view.usage) {
      const day = Date.parse(`${report.day}T00:00:00Z`);
      const ofDay = this.view.answers
        .slice(0, report.afterAnswers)
        .filter((answer) => fromFunction(answer) && dayOf(answer.serverMs!) === day);
      const answered = ofDay.filter(charged).length;
      const refunded = ofDay.filter((answer) => answer.refunded).length;
      const bound = this.dayBound(day, report.atMs, false) + refunded;
      if (report.requests < answered || report.requests > answered + bound) {
        return {
          message: `usage of ${report.day} at ${iso(report.atMs)} was ${report.requests} for ${answered} requests answered (bound: ${bound} more)`,
        };
      }
    }
    return undefined;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}
