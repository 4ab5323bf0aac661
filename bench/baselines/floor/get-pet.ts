import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';

/**
 * The floor of GET /pets/{petId}: the operation's one DynamoDB request and
 * nothing else (no limiter, no validation framework, no logs or metrics). No
 * correct implementation of the contract can answer faster than this.
 */
export function createHandler(dependencies: BaselineDependencies) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const id = Number(event.pathParameters?.petId);
    const { Item } = await dependencies.db.send(
      new GetCommand({ TableName: dependencies.tableNames.pets, Key: { id }, ConsistentRead: true }),
    );
    if (!Item) return { statusCode: 404, body: '{"code":"not_found"}' };
    return {
      statusCode: 200,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: Item.id, name: Item.name, categoryId: Item.categoryId, status: Item.status }),
    };
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
