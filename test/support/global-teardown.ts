import type { RunningDynamoDb } from '../../local/dynamodb-local';
import type { IamPolicyProxy } from './iam-policy-proxy';

export default async function globalTeardown(): Promise<void> {
  const { testDynamoDb, testIamPolicy } = globalThis as { testDynamoDb?: RunningDynamoDb; testIamPolicy?: IamPolicyProxy };
  await testIamPolicy?.close();
  await testDynamoDb?.stop();
  // The tests that made these calls failed on them; this names the grants they lacked, once each.
  const refused = [
    ...new Set(
      testIamPolicy
        ?.refused()
        .map((call) => `${call.principal}: ${call.action} on ${call.table}${call.index ? `/index/${call.index}` : ''}`),
    ),
  ];
  if (refused.length > 0)
    throw new Error(`IAM would refuse these calls of the functions (definitions/routes.ts grants them not):\n${refused.join('\n')}`);
}
