import type { IncomingMessage } from 'node:http';
import { grantAllows, grantStatements, onlyReadsOutside } from '../../definitions/table-grants';
import { logicalTableOf, principalOf, requiredPermissions } from '../support/iam-policy-proxy';

/** The grant model the stack writes and the IAM policy simulator enforces (definitions/table-grants.ts). */
describe('grants', () => {
  const access = { pets: ['dynamodb:Query', 'dynamodb:BatchGetItem'], rateLimits: ['dynamodb:UpdateItem'] } as const;

  it('puts Query on the indexes only, every other action on the table', () => {
    expect(grantStatements(access)).toEqual([
      { table: 'pets', actions: ['dynamodb:BatchGetItem'], on: 'table' },
      { table: 'pets', actions: ['dynamodb:Query'], on: 'indexes' },
      { table: 'rateLimits', actions: ['dynamodb:UpdateItem'], on: 'table' },
    ]);
  });

  it('allows a Query of an index, not of the table; nothing on a table not named', () => {
    expect(grantAllows(access, 'dynamodb:Query', 'pets', 'byListShard')).toBe(true);
    expect(grantAllows(access, 'dynamodb:Query', 'pets')).toBe(false);
    expect(grantAllows(access, 'dynamodb:BatchGetItem', 'pets')).toBe(true);
    expect(grantAllows(access, 'dynamodb:GetItem', 'pets')).toBe(false);
    expect(grantAllows(access, 'dynamodb:UpdateItem', 'idempotency')).toBe(false);
  });

  it('counts BatchGetItem as a read, UpdateItem as a write', () => {
    expect(onlyReadsOutside(access, 'rateLimits')).toBe(true);
    expect(onlyReadsOutside({ ...access, pets: ['dynamodb:PutItem'] }, 'rateLimits')).toBe(false);
  });
});

describe('what a DynamoDB request asks of IAM', () => {
  it('names the index of a Query, each table of a batch, each item of a transaction', () => {
    expect(requiredPermissions('Query', { TableName: 't-pets', IndexName: 'byListShard' })).toEqual([
      { action: 'dynamodb:Query', tableName: 't-pets', index: 'byListShard' },
    ]);
    expect(requiredPermissions('BatchGetItem', { RequestItems: { 't-pets': {}, 't-apiKeys': {} } })).toEqual([
      { action: 'dynamodb:BatchGetItem', tableName: 't-pets' },
      { action: 'dynamodb:BatchGetItem', tableName: 't-apiKeys' },
    ]);
    expect(
      requiredPermissions('TransactWriteItems', {
        TransactItems: [{ Put: { TableName: 't-apiKeys' } }, { ConditionCheck: { TableName: 't-pets' } }],
      }),
    ).toEqual([
      { action: 'dynamodb:PutItem', tableName: 't-apiKeys' },
      { action: 'dynamodb:ConditionCheckItem', tableName: 't-pets' },
    ]);
    expect(requiredPermissions('GetItem', { TableName: 't-pets' })).toEqual([{ action: 'dynamodb:GetItem', tableName: 't-pets' }]);
  });

  it('tells the caller by the access key id of its signature, and the table by its name', () => {
    const signed = {
      headers: {
        authorization: 'AWS4-HMAC-SHA256 Credential=listPets/20261124/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
    } as unknown as IncomingMessage;
    expect(principalOf(signed)).toBe('listPets');
    expect(principalOf({ headers: {} } as IncomingMessage)).toBe('');
    expect(logicalTableOf('test-1a2b3c4d-rateLimits')).toBe('rateLimits');
    expect(logicalTableOf('no-such-table')).toBeUndefined();
  });
});
