import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';

const planLimits: Record<string, { perMinute: number; perDay: number } | undefined> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

interface StoredKey {
  keyId: string;
  plan: string;
  status: string;
  meteringKey: string;
  expiresAt?: string;
  customLimits?: { perMinute: number; perDay: number };
}

/**
 * Baseline (a): the REQUEST authorizer as one plain handler: the SHA-256 hash
 * of the bearer token looked up in the same keys table with one GetItem, the
 * caller and its limits returned as context, the whole API allowed.
 */
export function createHandler(dependencies: Pick<BaselineDependencies, 'db' | 'tableNames'>) {
  return async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const authorization = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
    const token = /^bearer +(psk_[A-Za-z0-9_-]{43}) *$/i.exec(authorization ?? '')?.[1];
    if (!token) throw new Error('Unauthorized');
    const keyHash = createHash('sha256').update(token).digest('hex');
    const { Item } = await dependencies.db.send(
      new GetCommand({ TableName: dependencies.tableNames.apiKeys, Key: { keyHash }, ConsistentRead: true }),
    );
    const key = Item as StoredKey | undefined;
    if (key?.status !== 'active' || (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= Date.now()))
      throw new Error('Unauthorized');
    const limits = planLimits[key.plan] ?? key.customLimits;
    if (!limits) throw new Error('Unauthorized');
    const [apiPart, stage] = event.methodArn.split('/');
    return {
      principalId: key.keyId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `${apiPart}/${stage}/*` }],
      },
      context: { keyId: key.keyId, plan: key.plan, perMinute: String(limits.perMinute), perDay: String(limits.perDay) },
      usageIdentifierKey: key.meteringKey,
    };
  };
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
