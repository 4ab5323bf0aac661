import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SimulatedDynamoDB } from '../simulated-dynamodb';

/**
 * One table of the simulated DynamoDB as the scale mode meters it: every call
 * is charged the units DynamoDB would charge, by item size, and refused as
 * DynamoDB refuses a partition that has run out, in virtual time.
 *
 * Units ("Read/write capacity mode" and "DynamoDB read and write operations",
 * Amazon DynamoDB Developer Guide,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
 * a write costs one unit per started 1 KB of the larger of the item before and
 * after it (a write whose condition fails: of the item as it is), at least one;
 * a transactional write twice that; a strongly consistent GetItem one unit per
 * started 4 KB (at least one, an absent item too), eventually consistent half.
 * Item size by "Item sizes and formats" (itemSize, test/support/partition-limit-proxy.ts,
 * which the integration test test/integration/limiter-write-units.test.ts uses
 * beside DynamoDB Local's ConsumedCapacity).
 *
 * Partitions (as partition-limit-proxy.ts, without burst): one partition-key
 * value is one partition, 1,000 write units and 3,000 read units a second
 * ("Best practices for designing and using partition keys effectively",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 * A call that would take its key past them in the current second of virtual
 * time is refused with ProvisionedThroughputExceededException and applies
 * nothing; it costs nothing. The SDK's retries are not modelled: a throttled
 * call fails the request (conservative: the 5xx column counts it).
 *
 * It must be the table's only writer: it remembers each item's size from the
 * writes it charged.
 */
export const partitionLimitsPerSecond = { writeUnits: 1_000, readUnits: 3_000 } as const;

export interface ConsumedCapacity {
  writeUnits: number;
  readUnits: number;
  /** Calls refused for their partition's throughput. */
  throttledCalls: number;
  /** Write calls charged (a transaction counts once). */
  writeCalls: number;
  /** The largest item a call found or left (DynamoDB refuses an item over 400 KB: "Constraints in Amazon DynamoDB", Items, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html). */
  largestItemBytes: number;
}

type Item = Record<string, unknown>;
type Command = { input: unknown };
interface Charge {
  /** The partition-key values the call touches. */
  keys: string[];
  write: boolean;
  /** Their items' sizes before the call. */
  before: number[];
  /** 2 for a transaction's writes, ½ for an eventually consistent read. */
  factor: number;
}

/** An item's size by DynamoDB's rules, read from its plain value: the rules of itemSize (partition-limit-proxy.ts, which test/unit/limiter-scale.test.ts holds this to) without marshalling. */
export function plainItemSize(item: Item | undefined): number {
  let size = 0;
  for (const name in item) if (item[name] !== undefined) size += Buffer.byteLength(name) + plainValueSize(item[name]);
  return size;
}

function plainValueSize(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  // About one byte per two significant digits, plus one.
  if (typeof value === 'number')
    return Math.ceil(String(Math.abs(value)).replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, element) => sum + 1 + plainValueSize(element), 0);
  if (value instanceof Set) return [...value].reduce((sum: number, element) => sum + plainValueSize(element), 0);
  if (typeof value === 'object') return 3 + plainItemSize(value as Item);
  throw new Error(`no DynamoDB size for ${typeof value}`);
}

const writeUnitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

export class MeteredTable {
  readonly consumed: ConsumedCapacity = { writeUnits: 0, readUnits: 0, throttledCalls: 0, writeCalls: 0, largestItemBytes: 0 };
  private second = Number.NaN;
  /** Each item's size as last charged: the store hands out copies, and a big item's copy is slow. */
  private readonly sizes = new Map<string, number>();
  private readonly usedThisSecond = new Map<string, { writeUnits: number; readUnits: number }>();
  private readonly inner: DynamoDBDocumentClient;

  constructor(
    private readonly store: SimulatedDynamoDB,
    private readonly tableName: string,
    private readonly partitionKey: string,
    /** The virtual clock (ms). */
    private readonly now: () => number,
    /**
     * Charge items as if they were at most this big: what the limiter would cost
     * if its counter item kept a constant size (SCALING.md, "The limiter at scale").
     */
    private readonly chargedBytesAtMost = Number.POSITIVE_INFINITY,
  ) {
    this.inner = store.client({ name: 'scale', mode: 'immediate' });
  }

  /** A document client whose calls are metered here. */
  client(): DynamoDBDocumentClient {
    return { send: (command: Command) => this.send(command), destroy: () => {} } as unknown as DynamoDBDocumentClient;
  }

  private async send(command: Command): Promise<unknown> {
    const charge = this.chargeOf(command);
    this.refuseIfOver(charge);
    let after = charge.before;
    try {
      const result = await this.inner.send(command as never);
      if (charge.write) after = this.sizesAfter(charge, command, result as { Attributes?: Item });
      return result;
    } finally {
      // A write whose condition fails is charged too: the item as it is.
      this.take(charge, after);
    }
  }

  /** What a call will cost, from the sizes of its items before it applies (a write: and after, in take). */
  private chargeOf(command: Command): Charge {
    const input = command.input as Item;
    if (command instanceof GetCommand) {
      const key = this.partitionOf(input.Key as Item);
      return { keys: [key], write: false, before: [this.sizeAt(key)], factor: input.ConsistentRead ? 1 : 0.5 };
    }
    const transaction = command instanceof TransactWriteCommand;
    const keys = (transaction ? this.transactionWrites(input) : [input]).map((write) =>
      this.partitionOf((write.Key ?? write.Item) as Item),
    );
    return { keys, write: true, before: keys.map((key) => this.sizeAt(key)), factor: transaction ? 2 : 1 };
  }

  /** Units of a call whose items measured `before` and `after` it. */
  private unitsOf(charge: Charge, after: number[]): number {
    const charged = (bytes: number) => Math.min(bytes, this.chargedBytesAtMost);
    if (!charge.write) return Math.max(1, Math.ceil(charged(charge.before[0]!) / 4096)) * charge.factor;
    return charge.before.reduce((sum, bytes, index) => sum + charge.factor * writeUnitsOf(charged(Math.max(bytes, after[index]!))), 0);
  }

  /** Item sizes after a write: from the item it returned (ALL_NEW), else as stored; remembered for the next call. */
  private sizesAfter(charge: Charge, command: Command, result: { Attributes?: Item }): number[] {
    const returned = !(command instanceof TransactWriteCommand) && (command.input as Item).ReturnValues === 'ALL_NEW' && result.Attributes;
    const sizes = returned
      ? [plainItemSize(result.Attributes)]
      : charge.keys.map((key) => plainItemSize(this.store.item(this.tableName, this.keyOf(key))));
    for (const [index, key] of charge.keys.entries()) this.sizes.set(key, sizes[index]!);
    return sizes;
  }

  private sizeAt(key: string): number {
    let size = this.sizes.get(key);
    if (size === undefined) {
      size = plainItemSize(this.store.item(this.tableName, this.keyOf(key)));
      this.sizes.set(key, size);
    }
    return size;
  }

  /** The writes of a transaction on this table (a transaction of the limiter touches no other). */
  private transactionWrites(input: Item): Item[] {
    const entries = input.TransactItems as Record<string, Item>[];
    return entries.map((entry) => Object.values(entry)[0] as Item).filter((write) => write.TableName === this.tableName);
  }

  private refuseIfOver(charge: Charge): void {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.usedThisSecond.clear();
    }
    // Admitted on the units as the items stand now (a write's item may grow by the call: charged as it turns out).
    const units = this.unitsOf(charge, charge.before) / charge.keys.length;
    const limit = charge.write ? partitionLimitsPerSecond.writeUnits : partitionLimitsPerSecond.readUnits;
    const over = charge.keys.some((key) => this.used(key)[charge.write ? 'writeUnits' : 'readUnits'] + units > limit);
    if (!over) return;
    this.consumed.throttledCalls += 1;
    throw new ProvisionedThroughputExceededException({
      message: 'The level of configured provisioned throughput for the table was exceeded.',
      $metadata: {},
    });
  }

  private take(charge: Charge, after: number[]): void {
    const units = this.unitsOf(charge, after);
    if (charge.write) this.consumed.largestItemBytes = Math.max(this.consumed.largestItemBytes, ...charge.before, ...after);
    if (charge.write) {
      this.consumed.writeUnits += units;
      this.consumed.writeCalls += 1;
    } else this.consumed.readUnits += units;
    for (const key of charge.keys) this.used(key)[charge.write ? 'writeUnits' : 'readUnits'] += units / charge.keys.length;
  }

  private used(key: string): { writeUnits: number; readUnits: number } {
    let used = this.usedThisSecond.get(key);
    if (!used) {
      used = { writeUnits: 0, readUnits: 0 };
      this.usedThisSecond.set(key, used);
    }
    return used;
  }

  private keyOf(partition: string): Item {
    return { [this.partitionKey]: partition };
  }

  private partitionOf(key: Item): string {
    return String(key[this.partitionKey]);
  }
}
