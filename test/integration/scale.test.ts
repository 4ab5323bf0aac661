import { shardedDesign, singleListKeyDesign } from '../scale/designs';
import { testEndpoint } from '../support/dynamo';
import { runScale } from '../support/scale-run';

/**
 * The scale test, shortened (`npm run scale` runs it at length): the baseline
 * mix at 1000× today's traffic, with DynamoDB's partition limits and the
 * traffic divided by 10,000, through simulated Lambda instances, against the
 * partition-limit simulator. The sharded design takes it without a throttle;
 * the same run with every pet under one list key is throttled during the load:
 * the simulator can fail.
 *
 * This shortened run still borrows burst (300 s of each key's rate, banked from
 * the start, as the simulator lent before it stopped lending any by default):
 * at factor 10,000 one write unit is 10 s of a key's rate, and a run this short
 * on four cold list instances reads the first blocks' shards faster than that
 * (SCALING.md, "Proven on a simulator": what holds without burst, and what is open).
 */
const run = (design: typeof shardedDesign, seconds: number, seedPets: number) =>
  runScale({
    endpoint: testEndpoint(),
    design,
    multiple: 1_000,
    factor: 10_000,
    seconds,
    instances: { createPet: 16, listPets: 4, getPet: 4 },
    seedPets,
    limits: [20, 100],
    burstSeconds: 300,
  });

it('takes 1000× with no throttled request, every create stored once, every walk complete', async () => {
  // Long enough, on a table small enough (two blocks of 16 on each of the 16 stripes), that hundreds of walks end
  // at the newest pets, while the mix runs and after it.
  const report = await run(shardedDesign, 10, 512);
  console.log(report.text);
  // The load is the baseline mix at 1000×; the walks still under way are then finished with list pages only, at the
  // mix's rate of lists, every last page at the newest blocks. Neither is throttled, nor fails.
  expect(report.throttlesDuringLoad).toBe(0);
  expect(report.throttles).toBe(0);
  expect(report.failedRequests).toBe(0);
  expect(report.createsStoredOnce).toBe(true);
  expect(report.walks.wrong).toEqual([]);
  expect(report.walks.finished).toBeGreaterThan(0);
}, 300_000);

it('reports throttles on the list key when every pet is under one key', async () => {
  // Five seconds are enough to throttle one key.
  const report = await run(singleListKeyDesign, 5, 256);
  console.log(report.text);
  expect(report.throttlesDuringLoad).toBeGreaterThan(0);
  expect(report.text).toMatch(/on pets\/index\/by(List|Status)Shard key "(available#)?0"/);
}, 300_000);
