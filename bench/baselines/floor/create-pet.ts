import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';
import { shardKeys } from '../common/pets';

/**
 * The floor of POST /pets: the operation's one PutItem (with an id from a
 * block of 100 reserved on the allocator item) and nothing else: no limiter,
 * no validation beyond JSON.parse.
 */
export function createHandler(dependencies: BaselineDependencies) {
  const table = dependencies.tableNames.pets;
  let next = 0;
  let end = 0;
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const input = JSON.parse(event.body ?? '{}') as { name: string; categoryId: number; status?: string };
    if (next >= end) {
      const { Attributes } = await dependencies.db.send(
        new UpdateCommand({
          TableName: table,
          Key: { id: 0 },
          UpdateExpression: 'ADD lastReservedId :count',
          ExpressionAttributeValues: { ':count': 100 },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      end = Number(Attributes?.lastReservedId) + 1;
      next = end - 100;
    }
    const pet = { id: next++, name: input.name, categoryId: input.categoryId, status: input.status ?? 'available' };
    await dependencies.db.send(
      new PutCommand({
        TableName: table,
        Item: { ...pet, ...shardKeys(pet.id, pet.status), createdAt: new Date().toISOString() },
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
    return { statusCode: 201, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(pet) };
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
