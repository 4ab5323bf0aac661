import type { TableName } from './tables';

/**
 * The DynamoDB actions a function of the API may be granted, and how a grant
 * becomes IAM statements. The CDK stack writes these statements into each
 * function's role (lib/constructs/operation-function.ts); the tests' IAM policy
 * simulator (test/support/iam-policy-proxy.ts) refuses every call they do not
 * allow, as IAM would.
 */
export const readActions = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;
export const writeActions = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] as const;
export type DynamoDbAction = (typeof readActions)[number] | (typeof writeActions)[number];

/** Per table, exactly the actions a function may take on it. */
export type TableAccess = Partial<Record<TableName, readonly DynamoDbAction[]>>;

/** One IAM statement: its actions on the table itself (its ARN) or on every index of it (`<table ARN>/index/*`). */
export interface GrantStatement {
  table: TableName;
  actions: DynamoDbAction[];
  on: 'table' | 'indexes';
}

/**
 * Query is granted on the table's indexes only: every Query on a request path
 * reads an index (functions/data/). The other actions name the table itself:
 * GetItem, BatchGetItem and the writes act on items of the base table, and IAM
 * matches them against the table's ARN ("IAM policy to grant access to a
 * specific DynamoDB table and its indexes",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/iam-policy-specific-table-indexes.html).
 */
export function grantStatements(access: TableAccess): GrantStatement[] {
  const statements: GrantStatement[] = [];
  for (const [table, actions = []] of Object.entries(access) as [TableName, readonly DynamoDbAction[]][]) {
    const onTable = actions.filter((action) => action !== 'dynamodb:Query').sort();
    if (onTable.length > 0) statements.push({ table, actions: onTable, on: 'table' });
    if (actions.includes('dynamodb:Query')) statements.push({ table, actions: ['dynamodb:Query'], on: 'indexes' });
  }
  return statements;
}

/** Whether the statements of `access` allow `action` (e.g. `dynamodb:Query`) on the table, or on its index `index`. */
export function grantAllows(access: TableAccess, action: string, table: string, index?: string): boolean {
  return grantStatements(access).some(
    (statement) =>
      statement.table === table &&
      (statement.actions as string[]).includes(action) &&
      (statement.on === 'indexes') === (index !== undefined),
  );
}

/** Whether every action granted outside `except` only reads. */
export function onlyReadsOutside(access: TableAccess, except: TableName): boolean {
  const reads: readonly string[] = readActions;
  return Object.entries(access).every(([table, actions]) => table === except || (actions ?? []).every((action) => reads.includes(action)));
}
