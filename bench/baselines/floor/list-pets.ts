import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';

/** The floor of GET /pets: the operation's one Query (the first block's shard of byListShard, a page of `limit`) and nothing else. */
export function createHandler(dependencies: BaselineDependencies) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const limit = Number(event.queryStringParameters?.limit ?? 20);
    const { Items = [] } = await dependencies.db.send(
      new QueryCommand({
        TableName: dependencies.tableNames.pets,
        IndexName: 'byListShard',
        KeyConditionExpression: 'listShard = :shard AND id > :afterId',
        ExpressionAttributeValues: { ':shard': '0', ':afterId': 0 },
        Limit: limit + 1,
      }),
    );
    const pets = Items.slice(0, limit).map((item) => ({ id: item.id, name: item.name, categoryId: item.categoryId, status: item.status }));
    return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(pets) };
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
