import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { routeFor } from '../../definitions/routes';
import { createHandler as createGetPet } from '../../functions/get-pet/handler';
import { onlyReads } from '../../functions/http/api-handler';
import { createHandler as createListPets } from '../../functions/list-pets/handler';
import { counterKey } from '../../functions/rate-limit/testing';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { lambdaContext, type RestRequest, restProxyEvent } from '../support/api-gateway-events';
import { beforeGetPetSunset, createTestTables, testDependencies } from '../support/dynamo';

/**
 * getPet and listPets read while the limiter counts (one round trip of wall
 * time), on DynamoDB Local. The verdict still decides: a refused request gets
 * its 429 with no pet data and costs no more than a refusal did before; a
 * failed count or read answers 503 and is not charged.
 */
type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PER_MINUTE = 2;
// Five seconds into a real minute, fixed for the whole file: no window is crossed by accident.
// Real time (so DynamoDB Local's TTL sweep leaves the counters alone), but before getPet's sunset, whatever today's date.
const NOW = Math.floor(Math.min(Date.now(), beforeGetPetSunset) / 60_000) * 60_000 + 5_000;
const DAY = new Date(NOW).toISOString().slice(0, 10);

let dependencies: Dependencies;
let sends: { command: string; table: string; startedAt: number; endedAt?: number }[];
/** Makes the next send of this command to this table fail as DynamoDB throttling would. */
let throttle: { command: string; table: string } | undefined;

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables(), () => NOW);
  await dependencies.db.send(
    new PutCommand({
      TableName: dependencies.tableNames.pets,
      Item: { id: 7, listKey: 'pets', name: 'Rex', categoryId: 1, status: 'available', createdAt: new Date(NOW).toISOString() },
    }),
  );
  // Every request still goes to DynamoDB Local; this only records when each was in flight, or throttles one on purpose.
  const send = dependencies.db.send.bind(dependencies.db) as (command: unknown) => Promise<unknown>;
  (dependencies.db as unknown as { send: typeof send }).send = async (command) => {
    const name = (command as { constructor: { name: string } }).constructor.name.replace(/Command$/, '');
    const table = String((command as { input: { TableName?: string } }).input.TableName);
    const entry: (typeof sends)[number] = { command: name, table, startedAt: performance.now() };
    sends.push(entry);
    try {
      if (throttle && throttle.command === name && throttle.table === table) {
        throttle = undefined;
        // The shape of the SDK's error for DynamoDB throttling (HTTP 400, a client fault by name).
        throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
          name: 'ProvisionedThroughputExceededException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
        });
      }
      return await send(command);
    } finally {
      entry.endedAt = performance.now();
    }
  };
});
afterAll(() => dependencies.db.destroy());
beforeEach(() => {
  sends = [];
  throttle = undefined;
});

let keySequence = 0;
function event(
  keyId: string,
  request: Pick<RestRequest, 'path' | 'resource' | 'pathParameters' | 'query'>,
  perMinute = PER_MINUTE,
): APIGatewayProxyEvent {
  return restProxyEvent({
    method: 'GET',
    ...request,
    authorizer: { keyId, customerId: keyId, plan: 'free', perMinute: String(perMinute), perDay: '1000' },
  });
}

const operations: { name: string; handler: () => Handler; request: Parameters<typeof event>[1] }[] = [
  {
    name: 'getPet',
    handler: () => createGetPet(dependencies),
    request: { path: '/pets/7', resource: '/pets/{petId}', pathParameters: { petId: '7' } },
  },
  { name: 'listPets', handler: () => createListPets(dependencies), request: { path: '/pets', resource: '/pets', query: { limit: '5' } } },
];

async function counters(keyId: string) {
  const { Item } = await dependencies.db.send(
    new GetCommand({ TableName: dependencies.tableNames.rateLimits, Key: { pk: counterKey(keyId, DAY) }, ConsistentRead: true }),
  );
  return { minuteGranted: Item?.minuteGranted, dayGranted: Item?.dayGranted, refusedCount: Item?.refusedCount };
}

it('overlaps exactly the operations whose functions only read (from the route table), never createPet', () => {
  expect([onlyReads(routeFor('getPet')), onlyReads(routeFor('listPets')), onlyReads(routeFor('createPet'))]).toEqual([true, true, false]);
});

describe.each(operations)('$name', ({ name, handler: makeHandler, request }) => {
  it('sends the read while the limiter update is still in flight', async () => {
    const keyId = `key_overlap_${name}_${++keySequence}`;
    const response = await makeHandler()(event(keyId, request), lambdaContext());
    expect(response.statusCode).toBe(200);
    const update = sends.find((send) => send.command === 'Update' && send.table === dependencies.tableNames.rateLimits);
    const read = sends.find((send) => send.table === dependencies.tableNames.pets);
    expect(update && read).toBeTruthy();
    // The read left before the update's answer came back: both round trips overlapped.
    expect(read?.startedAt).toBeLessThan(update?.endedAt as number);
  });

  it('answers a refused request 429 with no pet data, the same headers as before, and charges nothing more than a refusal', async () => {
    const keyId = `key_refused_${name}_${++keySequence}`;
    const handler = makeHandler();
    for (let i = 0; i < PER_MINUTE; i++) expect((await handler(event(keyId, request), lambdaContext())).statusCode).toBe(200);
    const refused = await handler(event(keyId, request), lambdaContext());
    expect(refused.statusCode).toBe(429);
    const body = JSON.parse(refused.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
    expect(body.code).toBe('rate_limited');
    expect(refused.body).not.toContain('Rex');
    const minuteEnd = Math.floor(NOW / 60_000) * 60 + 60;
    expect(refused.headers).toMatchObject({
      'X-RateLimit-Limit': String(PER_MINUTE),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(minuteEnd),
      'Retry-After': String(minuteEnd - Math.floor(NOW / 1000)),
      'Cache-Control': 'no-store',
    });
    // getPet is deprecated: its 429 carries Deprecation, Sunset and Link as every other answer of it does.
    if (name === 'getPet') expect(Object.keys(refused.headers ?? {})).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    // The served requests are counted once each; the refused one only as a refusal.
    expect(await counters(keyId)).toEqual({ minuteGranted: PER_MINUTE, dayGranted: PER_MINUTE, refusedCount: 1 });
  });

  it('sends no pet read, and no write, for a refusal the instance already knows of: one read of the key state on its counters', async () => {
    const keyId = `key_known_refusal_${name}_${++keySequence}`;
    // 30 a minute: refusals are recorded for the ban rule in batches of 3.
    const perMinute = 30;
    const handler = makeHandler();
    for (let i = 0; i < perMinute; i++) expect((await handler(event(keyId, request, perMinute), lambdaContext())).statusCode).toBe(200);
    // The first refusal learns that the minute is used up: its count is sent (and refused), its read too (overlapped).
    expect((await handler(event(keyId, request, perMinute), lambdaContext())).statusCode).toBe(429);
    sends = [];
    const known = await handler(event(keyId, request, perMinute), lambdaContext());
    expect(known.statusCode).toBe(429);
    expect(known.headers).toMatchObject({ 'X-RateLimit-Limit': String(perMinute), 'X-RateLimit-Remaining': '0' });
    expect(known.body).not.toContain('Rex');
    // The key tool may have revoked the key or changed its plan since: the counters' item says (#29).
    expect(sends.map(({ command, table }) => ({ command, table }))).toEqual([
      { command: 'Get', table: dependencies.tableNames.rateLimits },
    ]);
  });

  it('still answers 429, not 400, to a refused request whose input is invalid', async () => {
    const keyId = `key_refused_invalid_${name}_${++keySequence}`;
    const handler = makeHandler();
    for (let i = 0; i < PER_MINUTE; i++) await handler(event(keyId, request), lambdaContext());
    const invalid =
      name === 'getPet' ? { ...request, path: '/pets/x', pathParameters: { petId: 'x' } } : { ...request, query: { limit: '0' } };
    expect((await handler(event(keyId, invalid), lambdaContext())).statusCode).toBe(429);
  });

  it('answers 503 with no pet data when the count fails, though the read succeeded', async () => {
    const keyId = `key_count_fails_${name}_${++keySequence}`;
    throttle = { command: 'Update', table: dependencies.tableNames.rateLimits };
    const response = await makeHandler()(event(keyId, request), lambdaContext());
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBeDefined();
    expect(response.body).not.toContain('Rex');
    expect(sends.some((send) => send.table === dependencies.tableNames.pets)).toBe(true);
    expect(await counters(keyId)).toEqual({ minuteGranted: undefined, dayGranted: undefined, refusedCount: undefined });
  });

  it('answers 503 when the read fails after the count, and does not charge it (the exactly-once rules)', async () => {
    const keyId = `key_read_fails_${name}_${++keySequence}`;
    const handler = makeHandler();
    throttle = { command: name === 'getPet' ? 'Get' : 'Query', table: dependencies.tableNames.pets };
    const failed = await handler(event(keyId, request), lambdaContext());
    expect(failed.statusCode).toBe(503);
    expect(JSON.parse(failed.body)).toMatchObject({ code: 'service_unavailable' });
    // The charge was taken back: the headers say so, and the next request is the first one counted.
    expect(failed.headers).toMatchObject({ 'X-RateLimit-Limit': String(PER_MINUTE), 'X-RateLimit-Remaining': String(PER_MINUTE) });
    const next = await handler(event(keyId, request), lambdaContext());
    expect(next.statusCode).toBe(200);
    expect(next.headers).toMatchObject({ 'X-RateLimit-Remaining': String(PER_MINUTE - 1) });
  });
});
