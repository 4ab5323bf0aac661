import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyRecord } from '../domain/api-keys';
import { dynamoCall } from './dynamo-errors';

/** Reads and writes API key records, which are keyed by the hash of the secret. */
export class ApiKeyRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { keyHash }, ConsistentRead: true })),
    );
    return Item as ApiKeyRecord | undefined;
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    await dynamoCall(() =>
      this.db.send(
        new PutCommand({ TableName: this.tableName, Item: record, ConditionExpression: 'attribute_not_exists(keyHash)' }),
      ),
    );
  }
}
