import { randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { apiKeyIndexes } from '../../definitions/tables';
import type { ApiKeyRecord, Customer, CustomerSecrets, Secret } from '../domain/api-keys';
import { dynamoCall } from './dynamo-errors';

/**
 * A conditional write found the key gone, or changed since it was read (by
 * another administrator at the same moment): nothing was written.
 */
export class ApiKeyChangedError extends Error {
  constructor(readonly keyId: string) {
    super(`API key ${keyId} changed or disappeared while it was being updated; nothing was written`);
    this.name = 'ApiKeyChangedError';
  }
}

/**
 * The key table holds two kinds of item (decision 14): a secret, keyed by the
 * SHA-256 hash of the secret, and its customer, keyed by `customer#<id>`
 * (customerKey): the customer's plan, limits and metering key live once, on
 * the customer, whichever secret is sent. The request path reads a secret and
 * its customer (the authorizer); the key tool's writes are in admin/key-table.ts.
 */
export class ApiKeyRepository {
  constructor(
    protected readonly db: DynamoDBDocumentClient,
    protected readonly tableName: string,
  ) {}

  /** The secret with this hash, with its customer: two consistent reads, the second keyed by the first. */
  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const secret = await this.findSecret(keyHash);
    const customer = secret && (await this.findCustomer(secret.customerId));
    return secret && customer ? joined(secret, customer) : undefined;
  }

  /** The secret alone (the authorizer reads its customer beside the customer's ban). */
  findSecret(keyHash: string): Promise<Secret | undefined> {
    return this.get<Secret>(keyHash);
  }

  findCustomer(customerId: string): Promise<Customer | undefined> {
    return this.get<Customer>(customerKey(customerId));
  }

  /**
   * A customer with its secrets: a Query of the `byCustomer` index, whose
   * partition is the customer's item and its secrets (a customer has one, two
   * during a rotation's grace), never a Scan of the table. An index is
   * eventually consistent: a secret written a moment ago may be missing, as it
   * may from an (eventually consistent) Scan. Undefined when the customer's item is.
   */
  async customerWithSecrets(customerId: string): Promise<CustomerSecrets | undefined> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamoCall(() =>
        this.db.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: apiKeyIndexes.byCustomer,
            KeyConditionExpression: 'customerId = :customerId',
            ExpressionAttributeValues: { ':customerId': customerId },
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    const isCustomer = (item: Record<string, unknown>) => item.keyHash === customerKey(customerId);
    const customer = items.find(isCustomer) as Customer | undefined;
    const secrets = items.filter((item) => !isCustomer(item)) as unknown as Secret[];
    return customer && { customer, secrets };
  }

  /**
   * Stores a new customer with its first secret, both or neither. Safe to
   * repeat: a repeat of a write that landed (the SDK's retry after a lost
   * answer, or the caller's own) finds this very key and succeeds, told by the
   * secret the refused transaction returns (ReturnValuesOnConditionCheckFailure
   * on a transaction's item: "TransactWriteItems", Amazon DynamoDB API Reference,
   * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html),
   * so it needs no read: the deployment check may only put.
   */
  async insert(record: ApiKeyRecord): Promise<void> {
    const inTheWay = await this.putWhereAbsent(itemsOf(record));
    if (inTheWay && inTheWay.secret?.keyId !== record.keyId) throw new ApiKeyChangedError(record.keyId);
  }

  /**
   * Puts the items given, each only where absent (the secret also over the
   * secret with id `replacing`), in one transaction: undefined when written,
   * else the items that were in the way.
   */
  protected async putWhereAbsent(
    items: { customer?: CustomerItem; secret: Secret },
    replacing?: string,
  ): Promise<{ customer?: Customer; secret?: Secret } | undefined> {
    const put = (Item: object, condition = 'attribute_not_exists(keyHash)', values?: Record<string, string>) => ({
      Put: {
        TableName: this.tableName,
        Item,
        ConditionExpression: condition,
        ...(values ? { ExpressionAttributeValues: values } : {}),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    });
    const writes = [
      ...(items.customer ? [put(items.customer)] : []),
      replacing === undefined ? put(items.secret) : put(items.secret, 'keyId = :replacing', { ':replacing': replacing }),
    ];
    try {
      await dynamoCall(() => this.db.send(new TransactWriteCommand({ TransactItems: writes })));
      return undefined;
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') throw error;
      const inTheWay = cancellationItems(error);
      const [customer, secret] = items.customer ? inTheWay : [undefined, inTheWay[0]];
      return { customer: customer as Customer | undefined, secret: secret as Secret | undefined };
    }
  }

  protected async get<Item>(keyHash: string): Promise<Item | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(new GetCommand({ TableName: this.tableName, Key: { keyHash }, ConsistentRead: true })),
    );
    return Item as Item | undefined;
  }

  /**
   * One transaction. Its ClientRequestToken makes a repeat within 10 minutes —
   * the SDK's retry after a lost answer, or the key tool's own retry with the
   * same token — succeed without applying it twice, where the repeat would
   * otherwise fail its `updatedAt` condition against our own landed change
   * ("TransactWriteItems", Amazon DynamoDB API Reference,
   * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
   */
  protected async transact(
    keyId: string,
    items: NonNullable<TransactWriteCommand['input']['TransactItems']>,
    requestToken: string = randomUUID(),
  ): Promise<void> {
    try {
      await dynamoCall(() => this.db.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: requestToken })));
    } catch (error) {
      if (error instanceof Error && error.name === 'TransactionCanceledException') throw new ApiKeyChangedError(keyId);
      throw error;
    }
  }
}

/** The items a cancelled transaction found in the way of its writes, by position (undefined where none). */
function cancellationItems(error: unknown): (Record<string, unknown> | undefined)[] {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return [];
  const reasons = (error as { CancellationReasons?: { Item?: Record<string, AttributeValue> }[] }).CancellationReasons ?? [];
  return reasons.map((reason) => (reason.Item ? unmarshall(reason.Item) : undefined));
}

/** The key of a customer's item in the key table: no SHA-256 hash (64 hex digits) can take this form. */
export function customerKey(customerId: string): string {
  return `customer#${customerId}`;
}

/** A secret with its customer: one key as the key tool shows it. */
export function joined(secret: Secret, customer: Customer): ApiKeyRecord {
  const { createdAt: _customerCreatedAt, ...ofCustomer } = customer;
  return { ...ofCustomer, ...secretOf(secret) };
}

/** The stored items of a record: its secret, and its customer (created with its first secret). */
export function itemsOf(record: ApiKeyRecord): { secret: Secret; customer: CustomerItem } {
  return { secret: secretOf(record), customer: customerItem(record) };
}

/** A customer as the key table stores it: under customerKey, beside its secrets. */
export type CustomerItem = Customer & { keyHash: string };

/** The customer's own attributes, whatever else the object carries, keyed as its item. */
export function customerItem(customer: Customer): CustomerItem {
  const { customerId, plan, owner, customLimits, meteringKey, createdAt, customerUpdatedAt } = customer;
  return {
    keyHash: customerKey(customerId),
    customerId,
    plan,
    owner,
    ...(customLimits ? { customLimits } : {}),
    meteringKey,
    createdAt,
    customerUpdatedAt,
  };
}

/** The secret's own attributes, whatever else the object carries: what is stored as its item. */
export function secretOf(record: Secret): Secret {
  const { keyHash, keyId, customerId, displayPrefix, status, createdAt, updatedAt, expiresAt } = record;
  return { keyHash, keyId, customerId, displayPrefix, status, createdAt, updatedAt, ...(expiresAt !== undefined ? { expiresAt } : {}) };
}
