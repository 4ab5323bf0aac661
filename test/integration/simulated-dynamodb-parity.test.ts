import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { issueKey, type PlanChoice, revokeKey, rotateKey, setPlan } from '../../admin/key-admin';
import { localTarget } from '../../admin/targets/local';
import type { TableName } from '../../definitions/tables';
import { itemThatFailedCondition } from '../../functions/data/conditional-check';
import { CounterTable, RateLimiter } from '../../functions/rate-limit';
import { seededRandom } from '../support/customer-simulation';
import { createTestTables, testDay, testDependencies } from '../support/dynamo';
import { SimulatedDynamoDB } from '../support/simulated-dynamodb';

/**
 * The customer simulation's in-memory DynamoDB (test/support/simulated-dynamodb.ts)
 * answers as DynamoDB Local does: every call of a seeded run of the real
 * limiter (three instances, refunds, refusals into a ban) and the real key tool
 * (issue, set-plan up and down, rotate, revoke) goes to both, and each answer
 * (its item, or its error and the item in the way) and each item written must
 * be the same. What the simulation finds is then DynamoDB's behaviour, not the model's.
 */
let tableNames: Record<TableName, string>;
let local: DynamoDBDocumentClient;

beforeAll(async () => {
  tableNames = await createTestTables();
  local = testDependencies(tableNames).db;
});
afterAll(() => local.destroy());

type Settled = { ok: true; value: Record<string, unknown> } | { ok: false; error: Error & Record<string, unknown> };

function settle(promise: Promise<unknown>): Promise<Settled> {
  return promise.then(
    (value) => ({ ok: true, value: value as Record<string, unknown> }),
    (error: unknown) => ({ ok: false, error: error as Error & Record<string, unknown> }),
  );
}

/** JSON with every map's keys in order: DynamoDB returns an item's attributes in no particular order. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, field]) => field !== undefined);
  return `{${entries
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`)
    .join(',')}}`;
}

/** What an answer says, without what only one of the two can say (request ids, capacity). */
function meaningOf(answer: Settled): unknown {
  if (!answer.ok) {
    const reasons = (answer.error.CancellationReasons ?? []) as { Code?: string; Item?: unknown }[];
    return {
      error: answer.error.name,
      item: itemThatFailedCondition(answer.error),
      reasons: reasons.map((reason) => reason.Code),
    };
  }
  const { Item, Attributes, Items } = answer.value;
  const sorted = (Items as unknown[] | undefined)?.map(canonical).sort();
  return { Item, Attributes, Items: sorted };
}

/** A client that sends each call to DynamoDB Local and to the model, answers with DynamoDB Local's, and records any difference. */
function tee(model: DynamoDBDocumentClient, differences: string[], kinds: Map<string, number>): DynamoDBDocumentClient {
  const send = async (command: { input: unknown; constructor: { name: string } }) => {
    const modelled = await settle(model.send(command as never));
    const real = await settle(local.send(command as never));
    const [a, b] = [canonical(meaningOf(real)), canonical(meaningOf(modelled))];
    const kind = `${command.constructor.name} ${real.ok ? 'ok' : real.error.name}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    if (a !== b) {
      differences.push(`${command.constructor.name} ${JSON.stringify(command.input)}\n  DynamoDB Local: ${a}\n  model: ${b}`);
    }
    if (!real.ok) throw real.error;
    return real.value;
  };
  return { send, destroy: () => {} } as unknown as DynamoDBDocumentClient;
}

const choices: PlanChoice[] = [
  { plan: 'free' },
  { plan: 'pro' },
  { plan: 'business' },
  { plan: 'enterprise', customLimits: { perMinute: 20, perDay: 100 } },
  { plan: 'enterprise', customLimits: { perMinute: 10, perDay: 40 } },
];

it('answers every call of the limiter and the key tool as DynamoDB Local does', async () => {
  const random = seededRandom(44);
  const differences: string[] = [];
  const kinds = new Map<string, number>();
  const db = tee(new SimulatedDynamoDB(tableNames).client({ name: 'parity', mode: 'immediate' }), differences, kinds);
  const target = localTarget(db, tableNames);
  let now = Date.parse(`${testDay()}T10:00:00Z`);
  const issued = await issueKey(target, { plan: 'enterprise', customLimits: { perMinute: 20, perDay: 100 }, owner: 'Parity' }, now);
  const secrets = [issued.key.keyId];
  const limiters = ['a', 'b', 'c'].map((id) => new RateLimiter(new CounterTable(db, tableNames.rateLimits), () => {}, { instanceId: id }));
  let limits = issued.key.limits;
  for (let step = 0; step < 300; step++) {
    now += Math.floor(random() * 900);
    if (step % 60 === 30) {
      const changed = await setPlan(target, secrets.at(-1)!, choices[Math.floor(random() * choices.length)]!, now);
      limits = changed.key.limits;
    }
    if (step === 100) secrets.push((await rotateKey(target, secrets[0]!, 20_000, now)).successor.keyId);
    if (step === 200) await revokeKey(target, secrets[0]!, now);
    const limiter = limiters[Math.floor(random() * limiters.length)]!;
    const keyId = secrets.at(-1)!;
    const decision = await limiter.admit({ keyId, customerId: issued.key.keyId, limits: limits }, now).catch(() => undefined);
    if (decision && !decision.refusal && random() < 0.05) await decision.refund();
  }
  expect(differences.slice(0, 3)).toEqual([]);
  // The run reached what the limiter relies on: conditional writes refused with the item in the way, transactions.
  expect(kinds.get('UpdateCommand ConditionalCheckFailedException')).toBeGreaterThan(0);
  expect(kinds.get('TransactWriteCommand ok')).toBeGreaterThan(3);
  expect(kinds.get('GetCommand ok')).toBeGreaterThan(50);
}, 120_000);
