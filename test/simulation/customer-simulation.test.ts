import { type HistoryResult, runHistory } from '../support/customer-simulation';
import { invariants } from '../support/customer-simulation-invariants';

/**
 * A seeded simulation of one customer over a few minutes per history, 2,000
 * histories (issue 44, acceptance 4): the real limiter on several function
 * instances with skewed and frozen clocks, the real authorizer behind the
 * gateway's cache, the real key tool changing the plan (every history at least
 * once), rotating and revoking, over an in-memory DynamoDB that loses answers,
 * lands writes late and throttles (test/support/customer-simulation.ts). Every
 * step checks the invariants below; a failure names its seed, and
 * `npm run simulate -- --seed S` replays it exactly with its steps
 * (`npm run simulate -- --seeds N` runs more).
 */
const HISTORIES = 2_000;
const results: HistoryResult[] = [];

beforeAll(async () => {
  for (let seed = 1; seed <= HISTORIES; seed++) results.push(await runHistory(seed));
}, 300_000);

function brokenBy(invariant: string): string {
  const failed = results.filter((result) => result.failure?.invariant === invariant);
  if (failed.length === 0) return '';
  const first = failed[0]!;
  return [
    `${failed.length} of ${HISTORIES} histories broke "${invariant}"; seeds ${failed
      .slice(0, 20)
      .map((result) => result.seed)
      .join(', ')}${failed.length > 20 ? ', …' : ''}.`,
    `Seed ${first.seed}: ${first.failure!.message}`,
    `Its last steps:\n  ${first.failure!.steps.join('\n  ')}`,
    `Replay it: npm run simulate -- --seed ${first.seed}`,
  ].join('\n');
}

it.each(Object.values(invariants))('%s, in every history', (invariant) => {
  expect(brokenBy(invariant)).toBe('');
});

it('runs histories that change the plan, serve, refuse for every reason, ban, revoke, refund and meet every fault', () => {
  expect(results).toHaveLength(HISTORIES);
  const completed = results.filter((result) => !result.failure);
  expect(completed.every((result) => result.planChanges >= 1)).toBe(true);
  expect(results.reduce((sum, result) => sum + result.served, 0)).toBeGreaterThan(HISTORIES * 50);
  const historiesThatSaw = (what: string) => results.filter((result) => (result.seen[what] ?? 0) > 0).length;
  const exercised = [
    ...['429 rate_limited', '429 quota_exceeded', '429 key_suspended', 'gateway 429 key_suspended', 'unauthorized', '503', 'refund'],
    ...['throttle', 'held_back', 'late', 'lost_answer', 'sdk_retry'].map((fault) => `store ${fault}`),
    ...['set-plan free', 'set-plan pro', 'set-plan business', 'set-plan enterprise', 'rotate', 'revoke', 'midnight', 'frozen instance'],
  ];
  // Each in more than 10 histories of the 2,000 (each is in hundreds today).
  expect(Object.fromEntries(exercised.map((what) => [what, historiesThatSaw(what) > 10]))).toEqual(
    Object.fromEntries(exercised.map((what) => [what, true])),
  );
});

it('replays a seed exactly', async () => {
  const seed = results.find((result) => result.failure)?.seed ?? 1;
  const again = await runHistory(seed);
  expect(again).toEqual(results[seed - 1]);
});
