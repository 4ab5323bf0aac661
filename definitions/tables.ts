/**
 * The DynamoDB tables: their keys, indexes and time-to-live attributes. The CDK
 * stack creates them from this, and so does the local runtime on DynamoDB Local,
 * so that the two can never disagree about a key or an index name.
 */
export type AttributeType = 'S' | 'N';

export interface KeyAttribute {
  name: string;
  type: AttributeType;
}

export interface TableDefinition {
  /** What the table is for, in one line. */
  purpose: string;
  /** Environment variable that carries the table's name into the functions. */
  envVar: string;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  indexes: { name: string; partitionKey: KeyAttribute; sortKey?: KeyAttribute }[];
  /** Attribute holding the expiry in Unix seconds, for tables of ephemeral items. */
  timeToLiveAttribute?: string;
}

export const tables = {
  pets: {
    purpose: 'The pets, and the id block counter (id -100) with 7 copies of its value (ids -101 to -107): lists read one of the 8.',
    envVar: 'PETS_TABLE_NAME',
    partitionKey: { name: 'id', type: 'N' },
    indexes: [
      // Write-sharded lists (functions/data/pet-layout.ts): a pet of id block b is under shard
      // b mod 256 (listSharding below), listShard = "<shard>" and statusShard = "<status>#<shard>", sorted by id.
      { name: 'byListShard', partitionKey: { name: 'listShard', type: 'S' }, sortKey: { name: 'id', type: 'N' } },
      { name: 'byStatusShard', partitionKey: { name: 'statusShard', type: 'S' }, sortKey: { name: 'id', type: 'N' } },
    ],
  },
  apiKeys: {
    purpose:
      'Customers (plan, limits, metering key; keyHash `customer#<id>`) and their API keys (secrets), stored by the SHA-256 hash of the secret.',
    envVar: 'API_KEYS_TABLE_NAME',
    partitionKey: { name: 'keyHash', type: 'S' },
    indexes: [
      // The key tool finds a secret by its id. A customer's secrets are named on its own item, read strongly (decision 16).
      { name: 'byKeyId', partitionKey: { name: 'keyId', type: 'S' } },
    ],
  },
  rateLimits: {
    purpose: 'Request counters per key and window, and temporary bans; all expire by TTL.',
    envVar: 'RATE_LIMITS_TABLE_NAME',
    partitionKey: { name: 'pk', type: 'S' },
    indexes: [],
    timeToLiveAttribute: 'expiresAt',
  },
  idempotency: {
    purpose: 'Idempotency-Key records of POST /v1/pets (functions/domain/pet-creation.ts); expire after 24 hours.',
    envVar: 'IDEMPOTENCY_TABLE_NAME',
    partitionKey: { name: 'id', type: 'S' },
    indexes: [],
    timeToLiveAttribute: 'expiration',
  },
} as const satisfies Record<string, TableDefinition>;

export type TableName = keyof typeof tables;

/**
 * The write sharding of the pets list indexes (functions/data/pet-layout.ts
 * places a pet of id block b under shard b mod shardCount). expectedImbalance:
 * how much more than the average of its index the busiest shard takes, an
 * estimate (a shard takes whole blocks, each one instance's at a time, so shards
 * fill unevenly); the capacity model (scripts/capacity-model.ts) and the alarm
 * on the list shards (lib/constructs/operational-alarms.ts) use it.
 */
export const listSharding = { shardCount: 256, expectedImbalance: 1.5 } as const;

/** Index names, typed, for the queries that use them. */
export const petIndexes = { byListShard: 'byListShard', byStatusShard: 'byStatusShard' } as const;
export const apiKeyIndexes = { byKeyId: 'byKeyId' } as const;
