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
 */
const run = (design: typeof shardedDesign) =>
  runScale({
    endpoint: testEndpoint(),
    design,
    multiple: 1_000,
    factor: 10_000,
    seconds: 5,
    instances: { createPet: 16, listPets: 4, getPet: 4 },
    // One block of 16 on each of the 16 stripes.
    seedPets: 256,
    limits: [20, 100],
  });

it('takes 1000× with no throttled request, every create stored once, every walk complete', async () => {
  const report = await run(shardedDesign);
  console.log(report.text);
  // The load is the baseline mix at 1000×. The walks still under way are finished afterwards with list pages only,
  // every one of them at the newest blocks: a burst no mix sends, so its throttles are reported, not held against the design.
  expect(report.throttlesDuringLoad).toBe(0);
  expect(report.failedDuringLoad).toBe(0);
  expect(report.createsStoredOnce).toBe(true);
  expect(report.walks.wrong).toEqual([]);
  expect(report.walks.finished).toBeGreaterThan(0);
}, 120_000);

it('reports throttles on the list key when every pet is under one key', async () => {
  const report = await run(singleListKeyDesign);
  console.log(report.text);
  expect(report.throttlesDuringLoad).toBeGreaterThan(0);
  expect(report.text).toMatch(/on pets\/index\/by(List|Status)Shard key "(available#)?0"/);
}, 120_000);
