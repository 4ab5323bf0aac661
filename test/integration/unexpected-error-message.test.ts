import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createHandler as createPetHandler } from '../../functions/create-pet/handler';
import { createHandler as getPetHandler } from '../../functions/get-pet/handler';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { lambdaContext, restProxyEvent } from '../support/api-gateway-events';
import { beforeGetPetSunset, createTestTables, testDependencies } from '../support/dynamo';

/**
 * A 500 (a bug of ours, not a dependency's failure) says "nothing was
 * changed" only when no write can have been sent: here the pet's write lands
 * in DynamoDB Local, then the code after it throws, as a bug in building the
 * answer would.
 */
let dependencies: Dependencies;

beforeAll(async () => {
  dependencies = testDependencies(await createTestTables(), () => beforeGetPetSunset);
});

const caller = { keyId: 'key_unexpected0001', customerId: 'key_unexpected0001', plan: 'free', perMinute: '60', perDay: '1000' };

/** The real client, whose `send` throws a TypeError once `breaks` matched a call that DynamoDB answered. */
function breakingAfter(breaks: (command: object) => boolean): Dependencies {
  const db = dependencies.db;
  const send = db.send.bind(db) as (command: object) => Promise<unknown>;
  const broken = Object.create(db) as DynamoDBDocumentClient;
  broken.send = (async (command: object) => {
    const answer = await send(command);
    if (breaks(command)) throw new TypeError("Cannot read properties of undefined (reading 'id')");
    return answer;
  }) as DynamoDBDocumentClient['send'];
  return { ...dependencies, db: broken };
}

const isPetWrite = (command: object) =>
  command instanceof PutCommand && (command.input.TableName as string) === dependencies.tableNames.pets;

it('a create that throws after its pet was written: 500 that never says nothing was changed, and the pet is there', async () => {
  const name = `written-then-broken-${Date.now()}`;
  const handler = createPetHandler(breakingAfter(isPetWrite));
  const response = await handler(
    restProxyEvent({
      method: 'POST',
      resource: '/pets',
      path: '/pets',
      body: JSON.stringify({ name, categoryId: 1 }),
      headers: { 'Content-Type': 'application/json' },
      authorizer: caller,
    }),
    lambdaContext('createPet'),
  );
  const body = JSON.parse(response.body) as { code: string; message: string };
  expect(response.statusCode).toBe(500);
  expect(body.code).toBe('internal_error');
  expect(body.message).not.toMatch(/nothing was changed/i);
  expect(body.message).toMatch(/unknown whether the request took effect/);
  expect(body.message).toMatch(/Idempotency-Key/);
  // The write the message may not deny: the pet exists.
  const { Items = [] } = await dependencies.db.send(
    new ScanCommand({
      TableName: dependencies.tableNames.pets,
      FilterExpression: '#name = :name',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: { ':name': name },
    }),
  );
  expect(Items).toHaveLength(1);
});

it('a read that throws after its read: 500 "nothing was changed" (no write was sent)', async () => {
  const handler = getPetHandler(breakingAfter((command) => command instanceof GetCommand));
  const response = await handler(
    restProxyEvent({ method: 'GET', resource: '/pets/{petId}', path: '/pets/1', pathParameters: { petId: '1' }, authorizer: caller }),
    lambdaContext('getPet'),
  );
  expect(response.statusCode).toBe(500);
  expect(JSON.parse(response.body).message).toBe('An unexpected error occurred; nothing was changed.');
});
