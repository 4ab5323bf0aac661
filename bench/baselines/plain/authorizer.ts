import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';

const planLimits: Record<string, { perMinute: number; perDay: number } | undefined> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/** A secret as the keys table stores it: a credential of its customer. */
interface StoredKey {
  keyId: string;
  customerId: string;
  status: string;
  expiresAt?: string;
}

/** The customer the secret belongs to: its plan, limits and metering key. */
interface StoredCustomer {
  plan: string;
  meteringKey: string;
  customLimits?: { perMinute: number; perDay: number };
}

/**
 * Baseline (a): the REQUEST authorizer as one plain handler: the SHA-256 hash
 * of the bearer token looked up in the same keys table with one GetItem, then
 * its customer (plan and limits) with another, the caller and its limits
 * returned as context, the whole API allowed.
 */
export function createHandler(dependencies: Pick<BaselineDependencies, 'db' | 'tableNames'>) {
  return async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const authorization = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
    const token = /^bearer +(psk_[A-Za-z0-9_-]{43}) *$/i.exec(authorization ?? '')?.[1];
    if (!token) throw new Error('Unauthorized');
    const keyHash = createHash('sha256').update(token).digest('hex');
    const read = async (hash: string) =>
      (
        await dependencies.db.send(
          new GetCommand({ TableName: dependencies.tableNames.apiKeys, Key: { keyHash: hash }, ConsistentRead: true }),
        )
      ).Item;
    const key = (await read(keyHash)) as StoredKey | undefined;
    if (key?.status !== 'active' || (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= Date.now()))
      throw new Error('Unauthorized');
    const customer = (await read(`customer#${key.customerId}`)) as StoredCustomer | undefined;
    const limits = customer && (planLimits[customer.plan] ?? customer.customLimits);
    if (!customer || !limits) throw new Error('Unauthorized');
    const [apiPart, stage] = event.methodArn.split('/');
    return {
      principalId: key.keyId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `${apiPart}/${stage}/*` }],
      },
      context: {
        keyId: key.keyId,
        customerId: key.customerId,
        plan: customer.plan,
        perMinute: String(limits.perMinute),
        perDay: String(limits.perDay),
      },
      usageIdentifierKey: customer.meteringKey,
    };
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
