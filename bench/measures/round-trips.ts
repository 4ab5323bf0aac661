import { createDocumentClient } from '../../functions/runtime/dependencies';
import { bundleName, type Implementation, type Operation } from '../support/contenders';
import { dummyCredentials } from '../support/dynamodb';
import { measureInterleaved } from '../support/measure';
import { startNetworkDelay } from '../support/network-delay';
import { ADDED_ROUND_TRIP_MS, type BenchRun, fmt, ratioTarget } from '../support/run-context';
import { summarize } from '../support/stats';
import { benchDependencies, type LoadedBundle, operationContender } from './warm';

const readOperations: readonly Operation[] = ['getPet', 'listPets'];
const contenders: readonly Implementation[] = ['ours', 'plain', 'floor'];

/**
 * How many network round trips a read waits for, whatever DynamoDB Local's own
 * speed: every contender runs against DynamoDB Local through network-delay-relay.mjs,
 * once with no delay and once with ADDED_ROUND_TRIP_MS on every request, and
 * the growth of its p50 divided by one round trip counts the round trips it
 * waits for in sequence. One round trip is what the relay adds to one request
 * as measured by the floor, which sends exactly one (its own growth, in the
 * same interleaved run): the relay's timers fire late by a millisecond or two
 * each way on a loaded machine, so the nominal ADDED_ROUND_TRIP_MS would count
 * the floor itself as 1.2 round trips. A limiter that counts before reading
 * waits for two; ours should wait for one.
 */
export async function measureRoundTrips(run: BenchRun, endpoint: string, moduleOf: (name: string) => LoadedBundle): Promise<void> {
  const p50 = new Map<string, number>();
  for (const roundTripMs of [0, ADDED_ROUND_TRIP_MS]) {
    const delay = await startNetworkDelay(endpoint, roundTripMs);
    const db = createDocumentClient({ endpoint: delay.endpoint, region: 'us-east-1', credentials: dummyCredentials });
    try {
      for (const op of readOperations) {
        const { roundTripIterations: iterations, warmup } = run.settings;
        run.progress(`  ${op} with ${roundTripMs} ms added to every DynamoDB round trip: ${contenders.join(', ')}, ${iterations} each`);
        const samples = await measureInterleaved(
          contenders.map((impl) =>
            operationContender(impl, op, `delay${roundTripMs}`, moduleOf(bundleName(impl, op)).createHandler(benchDependencies(db))),
          ),
          { iterations, warmup },
        );
        for (const [id, values] of samples) p50.set(`${id}@${roundTripMs}`, summarize(values).p50);
      }
    } finally {
      db.destroy();
      await delay.stop();
    }
  }
  for (const op of readOperations) {
    const at = (impl: Implementation, roundTripMs: number) => p50.get(`${impl}:${op}@${roundTripMs}`) ?? Number.NaN;
    const growth = (impl: Implementation) => at(impl, ADDED_ROUND_TRIP_MS) - at(impl, 0);
    // One round trip, as the relay really adds it: the floor's growth (it waits for exactly one).
    const roundTrips = (impl: Implementation) => growth(impl) / growth('floor');
    const cell = (impl: Implementation) =>
      `${fmt.ms(at(impl, 0))} → ${fmt.ms(at(impl, ADDED_ROUND_TRIP_MS))}: grew ${fmt.ms(growth(impl))} ms, ${roundTrips(impl).toFixed(2)} round trips`;
    run.rows.push({
      measure: `${op}, p50 (ms) without → with ${ADDED_ROUND_TRIP_MS} ms added to each DynamoDB round trip: round trips waited (1 = the floor's growth)`,
      ours: cell('ours'),
      plain: cell('plain'),
      express: '—',
      floor: cell('floor'),
      ratio: `${(growth('ours') / ADDED_ROUND_TRIP_MS).toFixed(2)}× the nominal ${ADDED_ROUND_TRIP_MS} ms`,
      target: '≤ 1.20 round trips',
      met: ratioTarget(
        run,
        `${op}: network round trips waited (${ADDED_ROUND_TRIP_MS} ms added per round trip)`,
        roundTrips('ours'),
        1.2,
        `p50 grew ${fmt.ms(at('ours', ADDED_ROUND_TRIP_MS) - at('ours', 0))} ms (plain ${fmt.ms(at('plain', ADDED_ROUND_TRIP_MS) - at('plain', 0))} ms, floor ${fmt.ms(at('floor', ADDED_ROUND_TRIP_MS) - at('floor', 0))} ms)`,
      ),
    });
  }
}
