/**
 * Realistic one-line bugs of the rate limiter, each described by what it does
 * wrong: `npm run mutate` (scripts/mutate.ts) puts them into
 * functions/rate-limit/ one at a time and runs CI's seeds of the customer
 * simulation, which must catch every one (issue 49, acceptance 1). A bug the
 * seeds do not catch is a promise the auditor does not check yet.
 *
 * Kept as data so that a rename in functions/rate-limit/ is followed here by
 * editing a search text: a search text that no longer occurs exactly once
 * fails the command loudly, never passes it.
 */
export interface Mutation {
  name: string;
  /** What the bug does, as a client or an operator would notice it. */
  behaviour: string;
  /** From the project's root. */
  file: string;
  search: string;
  replace: string;
}

const allowance = 'functions/rate-limit/allowance.ts';
const limiter = 'functions/rate-limit/limiter.ts';
const counterTable = 'functions/rate-limit/counter-table.ts';

export const mutations: Mutation[] = [
  {
    name: 'minute-limit-off-by-one',
    behaviour: 'a lease may take the minute one request past its limit',
    file: counterTable,
    search: "':minuteMax': write.limits.perMinute - write.take,",
    replace: "':minuteMax': write.limits.perMinute - write.take + 1,",
  },
  {
    name: 'ended-minute-spare-kept',
    behaviour: "an ended minute's unserved spare is never returned to the day",
    file: allowance,
    search: 'if (this.minuteStart >= windows.dayEnd - 86_400) this.dayReturn += this.spareHeld;',
    replace: 'if (this.minuteStart >= windows.dayEnd - 86_400) this.dayReturn += 0;',
  },
  {
    name: 'plan-change-not-applied',
    behaviour: "a plan change the counter item shows is not applied to the instance's limits",
    file: limiter,
    search: '  if (state.customerLimits) changeLimits(memory, state.customerLimits);\n',
    replace: '',
  },
  {
    name: 'ban-at-n-plus-one',
    behaviour: 'the ban starts at the (N+1)-th refusal of a minute instead of the N-th',
    file: 'functions/rate-limit/windows.ts',
    search: 'export function banThreshold(limits: PlanLimits): number {\n  return limits.perMinute;',
    replace: 'export function banThreshold(limits: PlanLimits): number {\n  return limits.perMinute + 1;',
  },
  {
    name: 'verdict-on-stale-limits',
    behaviour: "the headers and 429s speak of the authorizer's cached limits, not the plan in force",
    file: limiter,
    search: 'const judged = verdictOf(counting, memory.limits,',
    replace: 'const judged = verdictOf(counting, caller.limits,',
  },
  {
    name: 'refund-credits-day-twice',
    behaviour: "a 503's refund after its lease moved on gives the day back two requests",
    file: allowance,
    search: 'if (asking.windows.day === this.day) this.dayReturn += 1;',
    replace: 'if (asking.windows.day === this.day) this.dayReturn += 2;',
  },
  {
    name: 'day-return-kept-past-midnight',
    behaviour: "an instance's day return of yesterday is given back on today's item",
    file: allowance,
    search: '      this.day = windows.day;\n      this.dayReturn = 0;\n',
    replace: '      this.day = windows.day;\n',
  },
  {
    name: 'remaining-ignores-own-spare',
    behaviour: "X-RateLimit-Remaining counts the instance's own unserved spare as used",
    file: allowance,
    search: 'const served = { minute: state.minuteGranted - this.spareHeld,',
    replace: 'const served = { minute: state.minuteGranted,',
  },
  {
    name: 'used-up-day-past-midnight',
    behaviour: 'a day seen used up is still refused after midnight',
    file: limiter,
    search: "if (memory.exhaustedDay === windows.day) return 'day_exhausted';",
    replace: "if (memory.exhaustedDay !== '') return 'day_exhausted';",
  },
  {
    name: 'gateway-denies-whole-ban',
    behaviour: "the authorizer denies for the whole ban, so the gateway's cached Deny outlasts it",
    file: 'functions/rate-limit/bans.ts',
    search: 'return bannedUntilSeconds * 1000 - nowMs > (cache.ttlSeconds + cache.answeredWithinSeconds) * 1000;',
    replace: 'return bannedUntilSeconds * 1000 > nowMs;',
  },
  {
    name: 'refund-puts-two-into-spare',
    behaviour: "a 503's refund while its lease is held puts two requests back into the spare",
    file: allowance,
    search: '    this.spareHeld += 1;\n    const terms: LeaseTerms',
    replace: '    this.spareHeld += 2;\n    const terms: LeaseTerms',
  },
  {
    name: 'spare-cap-on-every-lease',
    behaviour: 'a lease that adds no spare is still refused by the spare cap (after a plan change lowered it)',
    file: counterTable,
    search: 'const adds = addsSpare(write);',
    replace: 'const adds = true;',
  },
  {
    name: 'retry-after-a-second-short',
    behaviour: "a rate_limited answer's Retry-After ends one second before the minute does",
    file: 'functions/rate-limit/windows.ts',
    search: 'const retryAfter = secondsUntil(windows.minuteEnd, nowMs);',
    replace: 'const retryAfter = secondsUntil(windows.minuteEnd - 1, nowMs);',
  },
  {
    name: 'grace-cut-short',
    behaviour: "a rotated secret is refused 401 a minute before its grace ends (when the instance reads the customer's counters)",
    file: limiter,
    search: 'state.keyExpiresAt <= Math.floor(nowMs / 1000)',
    replace: 'state.keyExpiresAt <= Math.floor(nowMs / 1000) + 60',
  },
  {
    name: 'refusals-recounted-after-lost-answer',
    behaviour:
      'a batch of refusals whose record went unanswered is recorded again with the next, so a ban can start before the N-th refusal',
    file: limiter,
    search: 'if (appliedNothing(error)) refusals.unrecorded += batch;',
    replace: 'refusals.unrecorded += batch;',
  },
];
