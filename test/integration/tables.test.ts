import { randomBytes } from 'node:crypto';
import { DescribeTableCommand, DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
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
