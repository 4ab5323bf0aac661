import { audit, type Finding } from './simulation/auditor';
import { drawScenario, scenarios } from './simulation/scenarios';
import { clock, World } from './simulation/world';

/**
 * A deterministic simulation of one customer, after TigerBeetle's VOPR and
 * FoundationDB's simulation testing, in three parts kept apart:
 * - workloads (simulation/workloads/, one scenario a file): the world a
 *   history runs in (instances, clocks, the store's faults) and what its
 *   clients and administrator do;
 * - actors (simulation/actors/): function instances running the real
 *   RateLimiter, API Gateway with the real authorizer and its cache, the real
 *   key tool, over one in-memory DynamoDB (simulated-dynamodb.ts), run in
 *   virtual time by simulation/world.ts;
 * - the auditor (simulation/auditor.ts): each promise of docs/clients.md
 *   judged from what the clients saw.
 * One seed draws everything, the scenario first, so a failing seed replays exactly.
 */

/** The histories CI runs (seeds 1 to this): the simulation's jest test and `npm run mutate`. */
export const CI_HISTORIES = 2_000;
const STEPS_KEPT = 40;

export interface HistoryResult {
  seed: number;
  scenario: string;
  requests: number;
  served: number;
  /** How often each answer, fault and action came: what the history exercised. */
  seen: Record<string, number>;
  /** Every promise the history broke (the first finding of each). */
  findings: Finding[];
  /** The first of them, with the steps that led to it. */
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

let known: ReturnType<typeof scenarios> | undefined;

/** Runs the history of one seed; a failure carries the last `stepsKept` steps up to the answer that broke a promise. */
export async function runHistory(seed: number, options: { stepsKept?: number; traceCalls?: boolean } = {}): Promise<HistoryResult> {
  known ??= scenarios();
  const random = seededRandom(seed);
  const scenario = drawScenario(known, random);
  const world = new World(scenario.setup(random), random, scenario, options.traceCalls ?? false);
  let findings: Finding[];
  try {
    findings = audit(await world.run());
  } catch (error) {
    findings = [
      {
        promise: 'never a 500',
        message: `the simulation itself failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      },
    ];
  }
  const result = {
    seed,
    scenario: scenario.name,
    requests: world.requests,
    served: world.answers.filter((answer) => answer.status === 200).length,
    seen: world.seen,
    findings,
  };
  const first = findings[0];
  if (!first) return result;
  return {
    ...result,
    failure: { invariant: first.promise, message: first.message, steps: stepsUpTo(world, first.request, options.stepsKept ?? STEPS_KEPT) },
  };
}

function stepsUpTo(world: World, request: number | undefined, kept: number): string[] {
  const end =
    request === undefined ? world.steps.length : world.steps.findIndex((step) => step.request === request) + 1 || world.steps.length;
  return world.steps.slice(Math.max(0, end - kept), end).map((step) => `${clock(step.at)} ${step.line()}`);
}
