import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { apiKeyIndexes } from '../../definitions/tables';
import { ensureTables, tableNamesFor } from '../../local/tables';
import { testDynamoDbClient } from '../support/dynamo';

/** Two `npm start`s sharing one DynamoDB (AWS_ENDPOINT_URL_DYNAMODB) may make the tables at the same moment. */
it('creates the tables once when two starts race for them, and neither fails', async () => {
  const names = tableNamesFor(`race-${randomBytes(4).toString('hex')}`);
  const clients = [0, 1].map(() => testDynamoDbClient());
  try {
    await expect(Promise.all(clients.map((client) => ensureTables(client, names)))).resolves.toBeDefined();
    const [client] = clients as [DynamoDBClient];
    for (const tableName of Object.values(names)) {
      expect((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus).toBe('ACTIVE');
    }
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: names.rateLimits }));
    expect(ttl.TimeToLiveDescription?.TimeToLiveStatus).toBe('ENABLED');
  } finally {
    for (const client of clients) client.destroy();
  }
});

/** `npm start` keeps its data in .local across versions: a table made by an older one gets the indexes added since. */
it('adds to an existing table the indexes it lacks, and its items are found through them', async () => {
  const names = tableNamesFor(`older-${randomBytes(4).toString('hex')}`);
  const client = testDynamoDbClient();
  try {
    await client.send(
      new CreateTableCommand({
        TableName: names.apiKeys,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'keyHash', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'keyHash', AttributeType: 'S' }],
      }),
    );
    const item = { keyHash: { S: 'customer#key_0123456789abcdef' }, keyId: { S: 'x' }, customerId: { S: 'key_0123456789abcdef' } };
    await client.send(new PutItemCommand({ TableName: names.apiKeys, Item: item }));
    await ensureTables(client, names);
    const found = await client.send(
      new QueryCommand({
        TableName: names.apiKeys,
        IndexName: apiKeyIndexes.byKeyId,
        KeyConditionExpression: 'keyId = :id',
        ExpressionAttributeValues: { ':id': { S: 'x' } },
      }),
    );
    expect(found.Items).toEqual([item]);
    const table = (await client.send(new DescribeTableCommand({ TableName: names.apiKeys }))).Table;
    expect(table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual(Object.values(apiKeyIndexes).sort());
  } finally {
    client.destroy();
  }
});
