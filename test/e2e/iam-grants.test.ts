import { accessOfFunction } from '../../definitions/routes';
import type { TableAccess } from '../../definitions/table-grants';
import { postJson, startTestApi, type TestApi } from '../support/api';
import { testEndpoint } from '../support/dynamo';
import { DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';
import { everyGrant, grantRow, type IamCall, IamPolicyProxy } from '../support/iam-policy-proxy';

/**
 * IAM checked against the calls the code makes. Locally nothing enforces IAM,
 * so a grant missing from the route table (definitions/routes.ts) would show
 * only in AWS. Every integration and e2e test reaches DynamoDB Local through
 * the IAM policy simulator (test/support/global-setup.ts), which refuses a
 * function's call outside its grants as IAM does; this file drives the served
 * bundles through every path that needs a grant and holds the route table to
 * what they did: no call outside the grants, and no grant never used.
 */

/**
 * Every kind of request that reaches DynamoDB: the authorizer, each operation, with and
 * without Idempotency-Key, a replay, a replay whose COMPLETED mark was lost (the create
 * then looks for its pet), both list indexes.
 */
async function driveEveryPath(api: TestApi, faults: DynamoDbFaultProxy): Promise<Response[]> {
  const responses: Response[] = [];
  const call = async (path: string, init?: Parameters<TestApi['call']>[1]) => {
    const response = await api.call(path, init);
    responses.push(response);
    return response;
  };
  const created = await call('/pets', postJson({ name: 'Plain', categoryId: 1 }));
  const keyed = withIdempotencyKey({ name: 'Keyed', categoryId: 2 }, 'iam-tour-1');
  await call('/pets', keyed);
  await call('/pets', keyed); // the replay: the record is there
  // Both attempts of the COMPLETED mark fail: the replay finds the record in progress and reads the pet.
  faults.inject({ kind: 'http500', operation: 'UpdateItem', table: api.dependencies.tableNames.idempotency, times: 2 });
  const unmarked = withIdempotencyKey({ name: 'Unmarked', categoryId: 3 }, 'iam-tour-2');
  await call('/pets', unmarked);
  await call('/pets', unmarked);
  await call('/pets?limit=1');
  await call('/pets?status=available&limit=100');
  const { id } = (await created.json()) as { id: number };
  // A key an instance serves often gets a lease, and the requests served from it read the key's
  // counter item (GetItem on rateLimits): five requests per operation reach one.
  for (let more = 0; more < 3; more++) await call('/pets?limit=1');
  for (let gets = 0; gets < 5; gets++) await call(`/pets/${id}`);
  return responses;
}

function withIdempotencyKey(body: unknown, key: string): RequestInit {
  const init = postJson(body);
  return { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': `"${key}"` } };
}

/** The grants the calls used, written as everyGrant() writes grants. */
const usedGrants = (calls: IamCall[]) =>
  [
    ...new Set(
      calls.filter((call) => call.allowed).map((call) => grantRow(call.principal, call.action, call.table, call.index !== undefined)),
    ),
  ].sort();

async function withSimulator<T>(
  accessOf: ((principal: string) => TableAccess | undefined) | undefined,
  body: (api: TestApi, iam: IamPolicyProxy, faults: DynamoDbFaultProxy) => Promise<T>,
): Promise<T> {
  // functions → this simulator → a fault proxy → the run's simulator (testEndpoint), which holds the route table's grants.
  const faults = await DynamoDbFaultProxy.start(testEndpoint());
  const iam = await IamPolicyProxy.start(faults.endpoint, accessOf);
  const api = await startTestApi({ dynamoEndpoint: iam.endpoint });
  try {
    return await body(api, iam, faults);
  } finally {
    await api.close();
    await iam.close();
    await faults.close();
  }
}

it('every DynamoDB call of every function is within its route grants, and every grant is used', async () => {
  await withSimulator(undefined, async (api, iam, faults) => {
    const responses = await driveEveryPath(api, faults);
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201, 201, 201, ...Array(10).fill(200)]);
    expect(iam.refused()).toEqual([]);
    expect(usedGrants(iam.calls())).toEqual([...everyGrant()].sort());
  });
});

it('a grant removed from a route is caught: the call is refused as IAM refuses it, and the client gets a 500', async () => {
  // createPet without PutItem on the idempotency table: it cannot claim an Idempotency-Key.
  const withoutClaim = (principal: string): TableAccess | undefined => {
    if (principal !== 'createPet') return undefined;
    const access = accessOfFunction(principal);
    return { ...access, idempotency: access.idempotency?.filter((action) => action !== 'dynamodb:PutItem') };
  };
  await withSimulator(withoutClaim, async (api, iam) => {
    const response = await api.call('/pets', withIdempotencyKey({ name: 'Unfinished', categoryId: 1 }, 'iam-removed-1'));
    // AccessDeniedException is a client error of ours, not a dependency failure (functions/data/dynamo-errors.ts).
    expect(response.status).toBe(500);
    expect(iam.refused().map(({ principal, action, table }) => `${principal}: ${action} on ${table}`)).toEqual([
      'createPet: dynamodb:PutItem on idempotency',
    ]);
  });
});
