import { randomBytes, randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  type UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { deploymentCheckKeyId } from '../../definitions/deployment-check';
import type { PlanLimits, PlanName } from '../../definitions/plans';
import { authorizer } from '../../definitions/routes';
import { apiKeyIndexes, type TableName } from '../../definitions/tables';
import { dynamoCall } from '../data/dynamo-errors';
import { type CustomerChange, customerChangeUpdates } from '../rate-limit';
import { type ApiKeyRecord, type Customer, type CustomerSecrets, isUsable, limitsOf, type Secret } from './customer';

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

type Update = Required<
  Pick<UpdateCommand['input'], 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>
>;
type TransactItems = NonNullable<TransactWriteCommand['input']['TransactItems']>;

/** The tables the customer's commands write: its own, and the limiter's copy of its state (through the limiter's door). */
export type CustomerTableNames = Pick<Record<TableName, string>, 'apiKeys' | 'rateLimits'>;

/** Tries of an ensure: another hook of the same deployment may re-create the check's key at the same moment. */
const ENSURE_TRIES = 3;

/**
 * The key table, and the only code that reads or writes it (decision 16). It
 * holds two kinds of item (decision 14): a secret, keyed by the SHA-256 hash of
 * the secret, and its customer, keyed by `customer#<id>` (customerKey), which
 * holds the plan, limits and metering key once, and names its secrets' hashes.
 *
 * Every change is conditional on what was read (`updatedAt` of a secret,
 * `customerUpdatedAt` of a customer), so two administrators never interleave
 * halves of two changes, and reaches the customer's rate-limit counters in the
 * same transaction, where the functions see it at the next request, whatever
 * the authorizer cached (decision 15).
 */
export class CustomerTable {
  private readonly tableName: string;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableNames: CustomerTableNames,
  ) {
    this.tableName = tableNames.apiKeys;
  }

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

  /** The secret with this id (the `byKeyId` index, eventually consistent, gives its hash), read consistently with its customer. */
  async findById(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { Items } = await dynamoCall(() =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: apiKeyIndexes.byKeyId,
          KeyConditionExpression: 'keyId = :keyId',
          ExpressionAttributeValues: { ':keyId': keyId },
          ProjectionExpression: 'keyHash',
        }),
      ),
    );
    const keyHash = (Items?.[0] as Pick<Secret, 'keyHash'> | undefined)?.keyHash;
    return keyHash === undefined ? undefined : this.findByHash(keyHash);
  }

  /**
   * A customer with every one of its secrets, read strongly: the customer item
   * names its secrets' hashes, and each is a consistent read (a customer has
   * one secret, two during a rotation's grace, and its revoked ones). Never an
   * index, which may not yet hold a secret written a moment ago.
   */
  async customerWithSecrets(customerId: string): Promise<CustomerSecrets | undefined> {
    const customer = await this.findCustomer(customerId);
    if (!customer) return undefined;
    const secrets = await Promise.all(customer.secretHashes.map((keyHash) => this.findSecret(keyHash)));
    return { customer, secrets: secrets.filter((secret) => secret !== undefined) };
  }

  /** Every secret with its customer, for the listing's per-key views. */
  async scanAll(): Promise<ApiKeyRecord[]> {
    return (await this.scanCustomers()).flatMap(({ customer, secrets }) => secrets.map((secret) => joined(secret, customer)));
  }

  /**
   * Every customer with its secrets: a consistent Scan, whose cost grows with
   * the table (the listing and the metering's release only, never a request
   * path). A secret its customer names that the Scan passed before it was
   * written is read on its own, so a customer's secrets are complete.
   */
  async scanCustomers(): Promise<CustomerSecrets[]> {
    const secrets = new Map<string, Secret>();
    const customers: Customer[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamoCall(() =>
        this.db.send(new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: startKey, ConsistentRead: true })),
      );
      for (const item of page.Items ?? []) {
        if ('plan' in item) customers.push(item as Customer);
        else secrets.set(String(item.keyHash), item as Secret);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return Promise.all(
      customers.map(async (customer) => {
        const found = await Promise.all(customer.secretHashes.map(async (hash) => secrets.get(hash) ?? (await this.findSecret(hash))));
        return { customer, secrets: found.filter((secret) => secret !== undefined) };
      }),
    );
  }

  /**
   * Issues a new customer with its first secret, both or neither. Safe to
   * repeat: a repeat of a write that landed (the SDK's retry after a lost
   * answer, or the caller's own) finds this very key and succeeds, told by the
   * secret the refused transaction returns (ReturnValuesOnConditionCheckFailure
   * on a transaction's item: "TransactWriteItems", Amazon DynamoDB API Reference,
   * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html),
   * so it needs no read.
   */
  async insert(record: ApiKeyRecord): Promise<void> {
    const inTheWay = await this.putWhereAbsent(itemsOf(record));
    if (inTheWay && inTheWay.secret?.keyId !== record.keyId) throw new ApiKeyChangedError(record.keyId);
  }

  /**
   * The deployment check's customer and its secret, inserted where absent (the
   * check may only put: definitions/deployment-check.ts). A stored secret that
   * no longer works (revoked or expired), or a secret or customer item gone, is
   * re-created: the secret under an id of its own (deploymentCheckKeyId), of the
   * same customer (its counters, its metering key); a customer item gone is put
   * back as the check has it. Returns the customer as stored and the secret that works.
   */
  async ensureCheckCustomer(fresh: ApiKeyRecord, now: number): Promise<ApiKeyRecord> {
    const items = itemsOf(fresh);
    for (let tryIndex = 0; tryIndex < ENSURE_TRIES; tryIndex++) {
      const found = await this.putWhereAbsent(items);
      if (!found) return fresh;
      if (found.secret && found.customer && isUsable(found.secret, now)) return joined(found.secret, found.customer);
      const secret: Secret = { ...items.secret, keyId: deploymentCheckKeyId(items.secret.keyHash, randomBytes(4).toString('hex')) };
      const customer = found.customer ?? items.customer;
      const replaced = await this.putWhereAbsent({ ...(found.customer ? {} : { customer: items.customer }), secret }, found.secret?.keyId);
      if (!replaced) return joined(secret, customer);
    }
    throw new ApiKeyChangedError(fresh.keyId);
  }

  /**
   * Moves a customer, through one of its working secrets, to another plan
   * (custom limits for enterprise, none otherwise): on the customer's record,
   * so every secret of it has the new plan, and onto its counters, which the
   * functions apply at the next request. Refused (nothing written) when the
   * secret named is revoked or expired at `updatedAt`, or the customer changed
   * since it was read. Returns the customer as given, with its new plan.
   */
  async changePlan<C extends Pick<Customer, 'customerId' | 'plan' | 'customLimits' | 'customerUpdatedAt'>>(
    customer: C,
    through: Pick<Secret, 'keyId' | 'keyHash'>,
    change: { plan: PlanName; customLimits?: PlanLimits },
    updatedAt: string,
    token?: string,
  ): Promise<C> {
    const after = { ...withoutCustomLimits(customer), plan: change.plan, customerUpdatedAt: updatedAt, ...customLimitsOf(change) } as C;
    await this.transact(
      through.keyId,
      [
        {
          Update: {
            TableName: this.tableName,
            Key: { keyHash: customerKey(customer.customerId) },
            ...planUpdate(customer, change, updatedAt),
          },
        },
        { ConditionCheck: { TableName: this.tableName, Key: { keyHash: through.keyHash }, ...workingAt(updatedAt) } },
        ...this.counterUpdates(
          { keyId: through.keyId, customerId: customer.customerId },
          { limits: limitsOf(change) },
          Date.parse(updatedAt),
        ),
      ],
      token,
    );
    return after;
  }

  /**
   * Revokes a secret for good: the functions refuse it from its next request
   * on, the authorizer once its cache expires. Returns the secret as given, revoked.
   */
  async revoke<S extends Secret>(secret: S, updatedAt: string, token?: string): Promise<S> {
    const update: Update = {
      UpdateExpression: 'SET #status = :revoked, updatedAt = :updatedAt',
      ConditionExpression: '#status <> :revoked',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':revoked': 'revoked', ':updatedAt': updatedAt },
    };
    const fromMs = Date.parse(updatedAt);
    await this.transact(
      secret.keyId,
      [this.secretUpdate(secret, update), ...this.counterUpdates(secret, { revoked: true }, fromMs)],
      token,
    );
    return { ...secret, status: 'revoked', updatedAt };
  }

  /**
   * Stores a rotated secret's successor (a credential of the same customer,
   * named on the customer's item), sets the predecessor's expiry and copies it
   * onto the customer's counters, in one transaction. The predecessor must be
   * active and not rotated already.
   */
  async insertSuccessor(successor: Secret, predecessor: Secret, predecessorExpiresAt: string, token?: string) {
    const expiresAtMs = Date.parse(predecessorExpiresAt);
    const secret = secretOf(successor);
    await this.transact(
      predecessor.keyId,
      [
        { Put: { TableName: this.tableName, Item: secret, ConditionExpression: 'attribute_not_exists(keyHash)' } },
        this.secretUpdate(predecessor, {
          UpdateExpression: 'SET expiresAt = :expiresAt, updatedAt = :updatedAt',
          ConditionExpression: '#status = :active AND attribute_not_exists(expiresAt)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':expiresAt': predecessorExpiresAt, ':updatedAt': successor.createdAt, ':active': 'active' },
        }),
        this.secretNamed(predecessor.customerId, secret.keyHash),
        ...this.counterUpdates(predecessor, { expiresAtSeconds: Math.floor(expiresAtMs / 1000) }, expiresAtMs),
      ],
      token,
    );
  }

  /**
   * Puts the items given, each only where absent (the secret also over the
   * secret with id `replacing`), in one transaction: undefined when written,
   * else the items that were in the way.
   */
  private async putWhereAbsent(
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

  private async get<Item>(keyHash: string): Promise<Item | undefined> {
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
  private async transact(keyId: string, items: TransactItems, requestToken: string = randomUUID()): Promise<void> {
    try {
      await dynamoCall(() => this.db.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: requestToken })));
    } catch (error) {
      if (error instanceof Error && error.name === 'TransactionCanceledException') throw new ApiKeyChangedError(keyId);
      throw error;
    }
  }

  /**
   * The counter updates that carry a change to the functions: on the
   * customer's counter items of the days from `fromMs` until the authorizer's
   * cache (which may still hold the old state) has expired.
   */
  private counterUpdates(secret: Pick<Secret, 'keyId' | 'customerId'>, change: CustomerChange, fromMs: number) {
    const fromSeconds = Math.floor(fromMs / 1000);
    return customerChangeUpdates(this.tableNames.rateLimits, secret, change, fromSeconds, fromSeconds + authorizer.resultsCacheTtlSeconds);
  }

  /** The customer's item names one more secret (the customer must exist). */
  private secretNamed(customerId: string, keyHash: string) {
    return {
      Update: {
        TableName: this.tableName,
        Key: { keyHash: customerKey(customerId) },
        UpdateExpression: 'SET secretHashes = list_append(secretHashes, :added)',
        ConditionExpression: 'attribute_exists(keyHash)',
        ExpressionAttributeValues: { ':added': [keyHash] },
      },
    };
  }

  /** An update of a secret, only if it is still as it was read. */
  private secretUpdate(secret: Pick<Secret, 'keyHash' | 'updatedAt'>, update: Update) {
    return {
      Update: {
        TableName: this.tableName,
        Key: { keyHash: secret.keyHash },
        UpdateExpression: update.UpdateExpression,
        ConditionExpression: `attribute_exists(keyHash) AND updatedAt = :seen AND (${update.ConditionExpression})`,
        ExpressionAttributeNames: update.ExpressionAttributeNames,
        ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':seen': secret.updatedAt },
      },
    };
  }
}

/** The customer item's update to a new plan, only if the customer is as it was read. */
function planUpdate(
  seen: Pick<Customer, 'customerUpdatedAt'>,
  change: { plan: PlanName; customLimits?: PlanLimits },
  updatedAt: string,
): Update {
  return {
    UpdateExpression: change.customLimits
      ? 'SET #plan = :plan, customLimits = :customLimits, customerUpdatedAt = :updatedAt'
      : 'SET #plan = :plan, customerUpdatedAt = :updatedAt REMOVE customLimits',
    ConditionExpression: 'customerUpdatedAt = :seen',
    ExpressionAttributeNames: { '#plan': 'plan' },
    ExpressionAttributeValues: {
      ':plan': change.plan,
      ':updatedAt': updatedAt,
      ':seen': seen.customerUpdatedAt,
      ...(change.customLimits ? { ':customLimits': change.customLimits } : {}),
    },
  };
}

function withoutCustomLimits<C extends { customLimits?: PlanLimits }>(customer: C): Omit<C, 'customLimits'> {
  const { customLimits: _previous, ...rest } = customer;
  return rest;
}

function customLimitsOf(change: { customLimits?: PlanLimits }): { customLimits?: PlanLimits } {
  return change.customLimits ? { customLimits: change.customLimits } : {};
}

/** A condition that holds while a secret works at `atIso`: not revoked, not past its rotation's grace. */
function workingAt(atIso: string) {
  return {
    ConditionExpression: 'attribute_exists(keyHash) AND #status = :active AND (attribute_not_exists(expiresAt) OR expiresAt > :at)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':active': 'active', ':at': atIso },
  };
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
  const { createdAt: _customerCreatedAt, secretHashes: _secretHashes, ...ofCustomer } = customer;
  return { ...ofCustomer, ...secretOf(secret) };
}

/** The stored items of a new customer's record: its first secret, and the customer naming it. */
export function itemsOf(record: ApiKeyRecord): { secret: Secret; customer: CustomerItem } {
  return { secret: secretOf(record), customer: customerItem({ ...record, secretHashes: [record.keyHash] }) };
}

/** A customer as the key table stores it: under customerKey, beside its secrets. */
type CustomerItem = Customer & { keyHash: string };

/** The customer's own attributes, whatever else the object carries, keyed as its item. */
function customerItem(customer: Customer): CustomerItem {
  const { customerId, plan, owner, customLimits, meteringKey, createdAt, customerUpdatedAt, secretHashes } = customer;
  return {
    keyHash: customerKey(customerId),
    customerId,
    plan,
    owner,
    ...(customLimits ? { customLimits } : {}),
    meteringKey,
    createdAt,
    customerUpdatedAt,
    secretHashes,
  };
}

/** The secret's own attributes, whatever else the object carries: what is stored as its item. */
export function secretOf(record: Secret): Secret {
  const { keyHash, keyId, customerId, displayPrefix, status, createdAt, updatedAt, expiresAt } = record;
  return { keyHash, keyId, customerId, displayPrefix, status, createdAt, updatedAt, ...(expiresAt !== undefined ? { expiresAt } : {}) };
}
