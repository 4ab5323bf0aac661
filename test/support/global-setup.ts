import { join } from 'node:path';
import { startDynamoDbLocal, stopLeftoverDynamoDbs } from '../../local/dynamodb-local';
import { ensureFunctionBundles } from '../../local/function-bundles';
import { IamPolicyProxy } from './iam-policy-proxy';

/**
 * Where each test run records the pid of its DynamoDB Local (one file per run,
 * named after the run's process), so that the next run stops the ones left by
 * runs that were killed outright. TEST_DYNAMODB_PID_DIR moves it (its own test).
 */
export function pidDirectory(): string {
  return process.env.TEST_DYNAMODB_PID_DIR ?? join(__dirname, '..', '..', '.local', 'test-dynamodb');
}

/**
 * One in-memory DynamoDB Local for the whole test run; every test file makes
 * tables of its own under a unique prefix, so files never see each other's data.
 * The tests reach it through the IAM policy simulator: a call a function makes
 * outside its route's grants is refused as IAM would refuse it in AWS, so the
 * test that made it fails here, not in production.
 */
export default async function globalSetup(): Promise<void> {
  const leftovers = await stopLeftoverDynamoDbs(pidDirectory());
  if (leftovers.length > 0)
    console.log(`Stopped ${leftovers.length} DynamoDB Local left by a killed test run (pid ${leftovers.join(', ')}).`);
  // The bundles the local API serves: built once here (or found fresh) rather than by each test file.
  await ensureFunctionBundles();
  const dynamo = await startDynamoDbLocal({ pidFile: join(pidDirectory(), `${process.pid}.pid`) });
  const iam = await IamPolicyProxy.start(dynamo.endpoint);
  process.env.TEST_DYNAMODB_ENDPOINT = iam.endpoint;
  // DynamoDB Local itself, behind the simulator (the leftover test looks for it after killing a run).
  process.env.TEST_DYNAMODB_LOCAL_ENDPOINT = dynamo.endpoint;
  Object.assign(globalThis, { testDynamoDb: dynamo, testIamPolicy: iam });
}
