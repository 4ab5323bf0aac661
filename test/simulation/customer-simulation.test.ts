import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CI_HISTORIES, type HistoryResult, runHistory } from '../support/customer-simulation';
import { type PromiseKey, promises } from '../support/simulation/auditor';
import { scenarios } from '../support/simulation/scenarios';

/**
 * CI's seeded histories of one customer (test/support/customer-simulation.ts):
 * scenarios of test/support/simulation/workloads/ run the real limiter on
 * function instances with skewed and frozen clocks, behind the real authorizer
 * and API Gateway's cache, with the real key tool, over an in-memory DynamoDB
 * that loses answers, lands writes late, throttles and answers
 * TransactionConflictException, in virtual time across midnight and through
 * 15-minute bans. The auditor (test/support/simulation/auditor.ts) judges each
 * history from what its clients saw: one test per promise of docs/clients.md
 * below, its sentence beside it. A failure names its seed:
 * `npm run simulate -- --seed S` replays it with its steps;
 * `npm run mutate` shows which promise catches each bug of test/simulation/mutations.ts.
 */
const results: HistoryResult[] = [];

beforeAll(async () => {
  for (let seed = 1; seed <= CI_HISTORIES; seed++) results.push(await runHistory(seed));
}, 600_000);

function brokenBy(promise: PromiseKey): string {
  const name = promises[promise].name;
  const failed = results.filter((result) => result.findings.some((finding) => finding.promise === name));
  if (failed.length === 0) return '';
  const first = failed[0]!;
  const finding = first.findings.find((each) => each.promise === name)!;
  return [
    `${failed.length} of ${CI_HISTORIES} histories broke "${name}"; seeds ${failed
      .slice(0, 20)
      .map((result) => result.seed)
      .join(', ')}${failed.length > 20 ? ', …' : ''}.`,
    `Seed ${first.seed} (${first.scenario}): ${finding.message}`,
    `Replay it: npm run simulate -- --seed ${first.seed}`,
  ].join('\n');
}

// "every operation answers `503 service_unavailable` with `Retry-After` instead of hanging — never a `500`"
it('never a 500, in every history', () => {
  expect(brokenBy('neverA500')).toBe('');
});

// "A key is never served past its limits."
it('served within the limits in force, in every history', () => {
  expect(brokenBy('servedWithinLimits')).toBe('');
});

// "a `429` may come while allowance is left, by at most a tenth of the per-minute limit"
it('a 429 comes only when its window is used up, within the bound, in every history', () => {
  expect(brokenBy('refusedOnlyWhenUsedUp')).toBe('');
});

// "its N-th refused request within one UTC minute, N being its per-minute limit (another full
// minute's worth), starts a 15-minute suspension. … With several instances it may start up to a
// tenth of N refusals per instance later"
it('the ban starts at the N-th refusal (a tenth of N per instance later at most) and lifts on time, in every history', () => {
  expect(brokenBy('banStartsAtTheNthRefusal')).toBe('');
});

// "While one server instance serves a key, `X-RateLimit-Remaining` is exact and the key is served its whole window."
it('Remaining is exact with one instance, in every history', () => {
  expect(brokenBy('remainingExactWithOneInstance')).toBe('');
});

// "When a key's requests are spread over many instances at once, Remaining may be lower than the truth"
// (by at most a tenth of the per-minute limit), never higher.
it('Remaining is never above the truth and at most a tenth low with several instances, in every history', () => {
  expect(brokenBy('remainingWithinATenth')).toBe('');
});

// "`rate_limited`: the minute is used up; `Retry-After` reaches to the minute's end."
it('Retry-After and the X-RateLimit-* of every 429 are true, in every history', () => {
  expect(brokenBy('retryAfterTrue')).toBe('');
});

// "API Gateway may answer for us: the same Error object with `Retry-After: 300` and no
// `X-RateLimit-*`; waiting it out is never refused past the suspension's end."
it('every gateway refusal and 401 has a true reason, in every history', () => {
  expect(brokenBy('gatewayRefusalsTrue')).toBe('');
});

// "the same for the day (`quota_exceeded`, and `usage` above the answers; on a day the plan
// changed in, a tenth of the larger limit"
it("usage and the day stay within that day's own bound, in every history", () => {
  expect(brokenBy('usageWithinTheDaysBound')).toBe('');
});

it('every promise the auditor holds quotes docs/clients.md as written', () => {
  const flat = (text: string) => text.replace(/\*\*/g, '').replace(/\s+/g, ' ');
  const docs = flat(readFileSync(join(__dirname, '..', '..', 'docs', 'clients.md'), 'utf8'));
  const misquoted = Object.values(promises).filter((promise) => !docs.includes(flat(promise.says)));
  expect(misquoted.map((promise) => promise.name)).toEqual([]);
});

it('runs every scenario, and histories that serve, refuse for every reason, ban, revoke, refund and meet every fault', () => {
  expect(results).toHaveLength(CI_HISTORIES);
  expect(new Set(results.map((result) => result.scenario))).toEqual(new Set(scenarios().map((scenario) => scenario.name)));
  expect(results.reduce((sum, result) => sum + result.served, 0)).toBeGreaterThan(CI_HISTORIES * 50);
  const historiesThatSaw = (what: string) => results.filter((result) => (result.seen[what] ?? 0) > 0).length;
  const exercised = [
    ...['429 rate_limited', '429 quota_exceeded', '429 key_suspended', 'gateway 429 key_suspended', 'gateway 401', '401', '503'],
    ...['refund', 'late refund', 'midnight', 'frozen instance', 'rotate', 'revoke'],
    ...['throttle', 'held_back', 'late', 'lost_answer', 'sdk_retry', 'transaction_conflict'].map((fault) => `store ${fault}`),
    ...['set-plan free', 'set-plan pro', 'set-plan business', 'set-plan enterprise'],
  ];
  // Each in more than 10 histories of the 2,000: what is seen less often, with how often.
  expect(exercised.map((what) => [what, historiesThatSaw(what)]).filter(([, count]) => Number(count) <= 10)).toEqual([]);
});

it('replays a seed exactly', async () => {
  const seed = results.find((result) => result.failure)?.seed ?? 1;
  const again = await runHistory(seed);
  expect(again).toEqual(results[seed - 1]);
});
