import { startDynamoDbLocal } from '../../local/dynamodb-local';

/**
 * One in-memory DynamoDB Local for the whole test run; every test file makes
 * tables of its own under a unique prefix, so files never see each other's data.
 */
export default async function globalSetup(): Promise<void> {
  const dynamo = await startDynamoDbLocal();
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  (globalThis as { testDynamoDb?: typeof dynamo }).testDynamoDb = dynamo;
}
