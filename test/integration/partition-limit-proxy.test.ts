import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tables } from '../../definitions/tables';
import { localCredentials } from '../../local/local-api';
import { createTestTables, testEndpoint } from '../support/dynamo';
import { itemSize, keySchemasOf, PartitionLimitProxy } from '../support/partition-limit-proxy';

/**
 * The simulator on DynamoDB Local, with a hand-moved clock: limits of 1,000
 * write and 3,000 read units per key divided by 100 (10 and 30 per second),
 * no burst. The same number of writes throttles when they share one index
 * key, and not when they are spread over many; no key takes more than its rate
 * over the window of one call, however long it was idle.
 */
let proxy: PartitionLimitProxy;
let names: Awaited<ReturnType<typeof createTestTables>>;
let db: DynamoDBDocumentClient;
let now = 1_000_000;

beforeAll(async () => {
  names = await createTestTables();
  proxy = await PartitionLimitProxy.start(testEndpoint(), keySchemasOf(tables, names), { factor: 100, now: () => now });
  db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: proxy.endpoint, region: 'local', ...localCredentials(), maxAttempts: 1, customUserAgent: 'sim/test' }),
  );
});
afterAll(async () => {
  db.destroy();
  await proxy.close();
});
beforeEach(() => proxy.reset());

/**
 * The first index of the pets table: writes carrying its partition key count on
 * it. The items carry no other index's key (an index holds only the items that
 * carry its keys), so only this index is charged.
 */
const index = tables.pets.indexes[0];
const pet = (id: number, indexKey: string) => ({ id, name: `Pet ${id}`, categoryId: 1, [index.partitionKey.name]: indexKey });

async function putAll(items: Record<string, unknown>[]): Promise<{ ok: number; throttled: string[] }> {
  let ok = 0;
  const throttled: string[] = [];
  for (const Item of items) {
    try {
      await db.send(new PutCommand({ TableName: names.pets, Item }));
      ok++;
    } catch (error) {
      throttled.push((error as Error).name);
    }
  }
  return { ok, throttled };
}

describe('partition-limit simulator', () => {
  it('throttles writes that all land on one index key, with DynamoDB’s exception and reason', async () => {
    const result = await putAll(Array.from({ length: 30 }, (_, i) => pet(1000 + i, 'hot')));
    // 10 units per second, judged over 1 s: 10 pass, the rest are refused within the same instant.
    expect(result.ok).toBe(10);
    expect(result.throttled).toEqual(Array(20).fill('ProvisionedThroughputExceededException'));
    expect(proxy.throttlesByKey()).toEqual([{ resource: `${names.pets}/index/${index.name}`, key: 'hot', count: 20 }]);
    expect(proxy.throttles[0]).toMatchObject({ operation: 'PutItem', caller: 'test', reason: 'IndexWriteKeyRangeThroughputExceeded' });
    // Refused writes never reached DynamoDB Local.
    const { Item } = await db.send(new GetCommand({ TableName: names.pets, Key: { id: 1029 }, ConsistentRead: true }));
    expect(Item).toBeUndefined();
  });

  it('lets the same writes through when their index keys are spread', async () => {
    const result = await putAll(Array.from({ length: 30 }, (_, i) => pet(2000 + i, `shard-${i % 8}`)));
    expect(result).toEqual({ ok: 30, throttled: [] });
    expect(proxy.throttles).toEqual([]);
    expect(proxy.hottest('write', 1)[0]?.writeUnits).toBe(4);
  });

  it('refills each key at its rate: a hot key passes again after a second', async () => {
    expect((await putAll(Array.from({ length: 12 }, (_, i) => pet(3000 + i, 'refill')))).ok).toBe(10);
    now += 1_000;
    expect((await putAll(Array.from({ length: 12 }, (_, i) => pet(3100 + i, 'refill')))).ok).toBe(10);
  });

  it('charges reads per partition-key value: a hot Query key is refused once its units are spent', async () => {
    await putAll(Array.from({ length: 5 }, (_, i) => pet(4000 + i, 'read')));
    now += 10_000;
    let refused = 0;
    for (let i = 0; i < 80; i++) {
      try {
        await db.send(
          new QueryCommand({
            TableName: names.pets,
            IndexName: index.name,
            KeyConditionExpression: '#k = :k',
            ExpressionAttributeNames: { '#k': index.partitionKey.name },
            ExpressionAttributeValues: { ':k': 'read' },
          }),
        );
      } catch (error) {
        expect((error as Error).name).toBe('ProvisionedThroughputExceededException');
        refused++;
      }
    }
    // 30 read units a second, 0.5 per eventually consistent Query of under 4 KB: 60 pass.
    expect(refused).toBe(20);
    expect(proxy.throttles[0]?.reason).toBe('IndexReadKeyRangeThroughputExceeded');
  });

  it('banks nothing: a key idle for ten minutes takes its rate over one second, and no more over any second after', async () => {
    now += 600_000;
    const admitted: number[] = [];
    // One write every 50 ms for 3 s: 20 a second offered, 10 a second the limit.
    for (let i = 0; i < 60; i++) {
      if ((await putAll([pet(5000 + i, 'steady')])).ok === 1) admitted.push(now);
      now += 50;
    }
    const busiestSecond = Math.max(...admitted.map((at) => admitted.filter((other) => other >= at && other < at + 1_000).length));
    expect(busiestSecond).toBe(10);
    expect(admitted.length).toBeLessThanOrEqual(30);
  });

  it('judges a call larger than one second of its key over the window that holds it, and charges an update on the larger item', async () => {
    // A counter item of 2.5 KB on a table without indexes: every update of it costs 3 write units, however small the change.
    const key = { pk: 'big-counter' };
    now += 600_000;
    await db.send(new PutCommand({ TableName: names.rateLimits, Item: { ...key, padding: 'x'.repeat(2_500), count: 0 } }));
    const update = () =>
      db.send(
        new UpdateCommand({
          TableName: names.rateLimits,
          Key: key,
          UpdateExpression: 'ADD #c :one',
          ExpressionAttributeNames: { '#c': 'count' },
          ExpressionAttributeValues: { ':one': 1 },
        }),
      );
    now += 1_000;
    let passed = 0;
    for (let i = 0; i < 5; i++)
      passed += await update().then(
        () => 1,
        () => 0,
      );
    // 10 units a second: three updates of 3 units (9), the fourth would make 12.
    expect(passed).toBe(3);
    expect(proxy.usage.get(`${names.rateLimits}\u0000big-counter`)?.writeUnits).toBe(3 + 9);
    expect(PartitionLimitProxy.windowMs(3, 1)).toBe(3_000);
  });

  it('lends burst only when asked to (burstSeconds), to measure how much a run would lean on it', async () => {
    const lending = await PartitionLimitProxy.start(testEndpoint(), keySchemasOf(tables, names), {
      factor: 100,
      burstSeconds: 300,
      now: () => now,
    });
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: lending.endpoint, region: 'local', ...localCredentials(), maxAttempts: 1 }),
    );
    try {
      for (let i = 0; i < 30; i++) await client.send(new PutCommand({ TableName: names.pets, Item: pet(6000 + i, 'lent') }));
      expect(lending.throttles).toEqual([]);
    } finally {
      client.destroy();
      await lending.close();
    }
  });

  it("judges the tables it is told carry one customer's load at AWS's own limits, the others divided by the factor", async () => {
    const perCustomer = await PartitionLimitProxy.start(testEndpoint(), keySchemasOf(tables, names), {
      factor: 100,
      now: () => now,
      unscaledTables: [names.rateLimits],
    });
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: perCustomer.endpoint, region: 'local', ...localCredentials(), maxAttempts: 1 }),
    );
    const outcomes = { counter: 0, pets: 0 };
    const count = async (where: keyof typeof outcomes, send: () => Promise<unknown>) => {
      try {
        await send();
        outcomes[where]++;
      } catch (error) {
        expect((error as Error).name).toBe('ProvisionedThroughputExceededException');
      }
    };
    for (let i = 0; i < 12; i++) {
      await count('counter', () => client.send(new PutCommand({ TableName: names.rateLimits, Item: { pk: 'key_one#2099-01-01', n: i } })));
      await count('pets', () => client.send(new PutCommand({ TableName: names.pets, Item: pet(9000 + i, 'scaled') })));
    }
    // Within one second: one counter item takes 12 of AWS's 1,000; the pets index key its 10 (1,000 ÷ 100).
    expect(outcomes).toEqual({ counter: 12, pets: 10 });
    client.destroy();
    await perCustomer.close();
  });

  /**
   * Scaling the traffic down thins it: at factor F a key takes one request in F
   * of those it takes in service, at the same moments chance puts them. Judged
   * over the window of one call, two calls of a key that fall in one window are
   * refused, however far below its rate the key runs on average, where AWS
   * judging the whole stream over a second serves them all (SCALING.md,
   * "Proven on a simulator").
   */
  it('refuses thinned traffic a key takes in service: at 40 % of its rate, a third of random calls at factor 10,000, none at factor 10 or when paced', async () => {
    const writesAt = async (factor: number, gapsMs: number[]) => {
      const scaled = await PartitionLimitProxy.start(testEndpoint(), keySchemasOf(tables, names), { factor, now: () => now });
      const client = DynamoDBDocumentClient.from(
        new DynamoDBClient({ endpoint: scaled.endpoint, region: 'local', ...localCredentials(), maxAttempts: 1 }),
      );
      let refused = 0;
      for (const [i, gap] of gapsMs.entries()) {
        now += gap;
        await client
          .send(new PutCommand({ TableName: names.pets, Item: pet(20_000 + factor + i, `thinned-${factor}`) }))
          .catch(() => refused++);
      }
      client.destroy();
      await scaled.close();
      return refused / gapsMs.length;
    };
    // 400 calls at 40 % of a key's write rate (1,000 ÷ factor units a second), at random moments (a seeded Poisson stream) or evenly.
    const random = seededRandom(7);
    const gaps = (factor: number, paced: boolean) =>
      Array.from({ length: 400 }, () => (1_000 / ((0.4 * 1_000) / factor)) * (paced ? 1 : -Math.log(1 - random())));
    expect(await writesAt(10, gaps(10, false))).toBe(0);
    const thinned = await writesAt(10_000, gaps(10_000, false));
    expect(thinned).toBeGreaterThan(0.2);
    expect(thinned).toBeLessThan(0.4);
    expect(await writesAt(10_000, gaps(10_000, true))).toBe(0);
  });

  it('sizes items by DynamoDB’s rules: names and values, numbers by their digits', () => {
    expect(itemSize({ id: { N: '12345' }, name: { S: 'Rex' } })).toBe(2 + 4 + 4 + 3);
  });
});

/** A small deterministic generator (mulberry32), so the random moments are the same on every run. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
