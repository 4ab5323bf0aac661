import { type DynamoDBDocumentClient, QueryCommand, ScanCommand, type UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { limitsFor, type PlanLimits, type PlanName } from '../definitions/plans';
import { authorizer } from '../definitions/routes';
import { apiKeyIndexes } from '../definitions/tables';
import { ApiKeyRepository, customerKey, joined, secretOf } from '../functions/data/api-key-repository';
import { dynamoCall } from '../functions/data/dynamo-errors';
import type { Customer, CustomerSecrets, Secret } from '../functions/domain/api-keys';
import { type KeyStateChange, keyStateUpdates } from '../functions/rate-limit';

type Update = Required<
  Pick<UpdateCommand['input'], 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>
>;

/**
 * The key tool's view of the key table: finding keys by id, listing them, and
 * the changes (rotate, revoke, plan). Every change is conditional on what was
 * read (`updatedAt` of a secret, `customerUpdatedAt` of a customer), so two
 * administrators never interleave halves of two changes, and reaches the
 * customer's rate-limit counters in the same transaction, where the functions
 * see it at the next request, whatever the authorizer cached.
 */
export class KeyTable extends ApiKeyRepository {
  constructor(
    db: DynamoDBDocumentClient,
    tableName: string,
    private readonly rateLimitsTable: string,
  ) {
    super(db, tableName);
  }

  /** The secret with this id (the `byKeyId` index, eventually consistent, gives its hash), read consistently with its customer. */
  async findById(keyId: string) {
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

  /** Every secret with its customer, for the listing's per-key views. */
  async scanAll() {
    return (await this.scanCustomers()).flatMap(({ customer, secrets }) => secrets.map((secret) => joined(secret, customer)));
  }

  /**
   * Every customer with its secrets (a secret whose customer item is missing is
   * left out, as the authorizer refuses it). A Scan, whose cost grows with the
   * table: for the listing and the metering's release only, never on a request path.
   */
  async scanCustomers(): Promise<CustomerSecrets[]> {
    const secrets: Secret[] = [];
    const customers = new Map<string, Customer>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamoCall(() => this.db.send(new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: startKey })));
      for (const item of page.Items ?? []) {
        if ('plan' in item) customers.set(String(item.customerId), item as Customer);
        else secrets.push(item as Secret);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    const byCustomer = Map.groupBy(secrets, (secret) => secret.customerId);
    return [...byCustomer].flatMap(([customerId, ofCustomer]) => {
      const customer = customers.get(customerId);
      return customer ? [{ customer, secrets: ofCustomer }] : [];
    });
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
    const planUpdate: Update = {
      UpdateExpression: change.customLimits
        ? 'SET #plan = :plan, customLimits = :customLimits, customerUpdatedAt = :updatedAt'
        : 'SET #plan = :plan, customerUpdatedAt = :updatedAt REMOVE customLimits',
      ConditionExpression: 'customerUpdatedAt = :seen',
      ExpressionAttributeNames: { '#plan': 'plan' },
      ExpressionAttributeValues: {
        ':plan': change.plan,
        ':updatedAt': updatedAt,
        ':seen': customer.customerUpdatedAt,
        ...(change.customLimits ? { ':customLimits': change.customLimits } : {}),
      },
    };
    const limits = limitsFor(change.plan, change.customLimits);
    await this.transact(
      through.keyId,
      [
        { Update: { TableName: this.tableName, Key: { keyHash: customerKey(customer.customerId) }, ...planUpdate } },
        { ConditionCheck: { TableName: this.tableName, Key: { keyHash: through.keyHash }, ...workingAt(updatedAt) } },
        ...this.counterUpdates({ keyId: through.keyId, customerId: customer.customerId }, { limits }, Date.parse(updatedAt)),
      ],
      token,
    );
    const { customLimits: _previous, ...rest } = customer;
    return {
      ...rest,
      plan: change.plan,
      customerUpdatedAt: updatedAt,
      ...(change.customLimits ? { customLimits: change.customLimits } : {}),
    } as C;
  }

  /**
   * Revokes a secret for good: the functions refuse it from its next request
   * on, the authorizer once its cache expires. Returns the secret as given, revoked.
   */
  async revoke<S extends Secret>(secret: S, updatedAt: string, token?: string): Promise<S> {
    await this.updateSecret(
      secret,
      {
        UpdateExpression: 'SET #status = :revoked, updatedAt = :updatedAt',
        ConditionExpression: '#status <> :revoked',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':updatedAt': updatedAt },
      },
      { revoked: true },
      Date.parse(updatedAt),
      token,
    );
    return { ...secret, status: 'revoked', updatedAt };
  }

  /**
   * Stores a rotated secret's successor (a credential of the same customer),
   * sets the predecessor's expiry and copies it onto the customer's counters,
   * in one transaction. The predecessor must be active and not rotated already.
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
        ...this.counterUpdates(predecessor, { expiresAtSeconds: Math.floor(expiresAtMs / 1000) }, expiresAtMs),
      ],
      token,
    );
  }

  /**
   * The counter updates that carry a change to the functions: on the
   * customer's counter items of the days from `fromMs` until the authorizer's
   * cache (which may still hold the old state) has expired.
   */
  private counterUpdates(secret: Pick<Secret, 'keyId' | 'customerId'>, change: KeyStateChange, fromMs: number) {
    const fromSeconds = Math.floor(fromMs / 1000);
    return keyStateUpdates(this.rateLimitsTable, secret, change, fromSeconds, fromSeconds + authorizer.resultsCacheTtlSeconds);
  }

  private async updateSecret(secret: Secret, update: Update, change: KeyStateChange, fromMs: number, token?: string) {
    await this.transact(secret.keyId, [this.secretUpdate(secret, update), ...this.counterUpdates(secret, change, fromMs)], token);
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

/** A condition that holds while a secret works at `atIso`: not revoked, not past its rotation's grace. */
function workingAt(atIso: string) {
  return {
    ConditionExpression: 'attribute_exists(keyHash) AND #status = :active AND (attribute_not_exists(expiresAt) OR expiresAt > :at)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':active': 'active', ':at': atIso },
  };
}
