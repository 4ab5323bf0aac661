import type { RunningDynamoDb } from '../../local/dynamodb-local';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { testDynamoDb?: RunningDynamoDb }).testDynamoDb?.stop();
}
