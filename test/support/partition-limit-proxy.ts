import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { answerDynamoDbError, inputOf, type LoopbackServer, listenOnLoopback, operationOf, readRequestBody } from './dynamodb-proxy';

/**
 * A partition-limit simulator: an HTTP proxy in front of DynamoDB Local (which
 * has no partition limits) that charges every call the read and write units
 * DynamoDB would, per partition-key value of the table and of each global
 * secondary index, and refuses a call whose key has run out, as DynamoDB does.
 *
 * What it models, and where AWS says so:
 * - Each partition serves at most 3,000 read units and 1,000 write units per
 *   second ("Best practices for designing and using partition keys effectively"
 *   and "Partitions and data distribution", Amazon DynamoDB Developer Guide,
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 *   One partition-key value never spreads over several partitions when its sort
 *   keys only grow (split for heat cannot help an always-increasing sort key), so
 *   the simulator gives each value one partition's share: the worst case, and
 *   the one the Pet Store's design has to survive.
 * - Burst never lifts a partition above those limits ("Burst and adaptive
 *   capacity", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html),
 *   and each key here has a whole partition's limits: so no key is lent burst,
 *   and none starts with capacity banked. A call of u units on a key of rate r
 *   is admitted only if the key's units admitted in the last W seconds, with
 *   it, stay within r·W, where W = max(1 s, u / r) is the shortest window that
 *   holds the call: at factor 1,000, 1 s for a write of one unit (r = 1) and
 *   for a read of up to 3 units (r = 3); at factor 10,000, 10 s for a write
 *   unit and 1.7 s for half a read unit. A run should last ten such windows.
 *   `burstSeconds` > 0 lends burst anyway (each key a token bucket of that
 *   many seconds of its rate, full at the start), to measure how much a run
 *   would lean on it.
 * - Units ("Read/write capacity mode", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
 *   a write costs one unit per started 1 KB of the item (an update, of the
 *   larger of the item before and after it); a strongly consistent
 *   read one unit per started 4 KB, eventually consistent half; a Query sums the
 *   sizes of the items it returns before rounding up to 4 KB; BatchGetItem
 *   charges each item as a GetItem; a transactional write costs twice. Item size
 *   is the sum of attribute name and value lengths ("Item sizes and formats",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 *   A write whose condition fails still costs its units on the table.
 * - Index writes ("Provisioned throughput considerations for global secondary
 *   indexes", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes):
 *   writing an item that carries an index's key attributes writes the index
 *   too, one unit per started 1 KB of the projected entry (ALL here: the item);
 *   an update or delete of an indexed item rewrites or deletes its entry; an
 *   update that changes the index key costs a delete and a put. When an index
 *   partition throttles, the table write is refused too ("GSI throttling",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations).
 * - The refusal is DynamoDB's: HTTP 400, `ProvisionedThroughputExceededException`
 *   with a `ThrottlingReasons` entry `<Table|Index><Read|Write>KeyRangeThroughputExceeded`
 *   naming the table or index ("Diagnosing throttling", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-diagnosing-workflow.html;
 *   "Error handling with DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html).
 *   Nothing of a refused call reaches DynamoDB Local. The SDK retries it.
 *
 * Limits are divided by `factor`, so that this machine's load reaches them: at
 * factor 10,000, one key takes 0.1 write and 0.3 read units per second.
 *
 * What scaling down does to a key's traffic (thinning): a run divided by the
 * factor keeps about one of every `factor` calls a key takes in service, at the
 * moments chance puts them. In service a busy key takes hundreds of calls a
 * second, which average out within the second AWS judges; thinned, a window
 * holds one call, and two calls that chance puts in one window are refused
 * however far below its rate the key runs. Measured here: at 40 % of a key's
 * rate, calls at random moments are refused about a quarter of the time at
 * factor 10,000, and never at factor 10 (a second holds 40 of them) or when
 * paced evenly (test/integration/partition-limit-proxy.test.ts). So a throttle
 * on a key whose load over the run stayed below its limit is the run's chance,
 * not a wall the service meets; the scale run reports that load beside each
 * throttled key (SCALING.md, "Proven on a simulator").
 *
 * Reads
 * are charged after DynamoDB Local answers (their size is known then) and
 * admitted on the size of the key's last read (half a unit at first): a read
 * that turns out larger than that may pass a window's limit by the difference.
 * Loopback only.
 */
export interface KeySchema {
  partitionKey: string;
  indexes: { name: string; partitionKey: string; sortKey?: string }[];
}

export interface PartitionLimits {
  /** AWS's limits are divided by this. */
  factor: number;
  /** Per partition-key value, before the factor. Defaults: 1,000 and 3,000. */
  writeUnitsPerSecond?: number;
  readUnitsPerSecond?: number;
  /**
   * Burst lent to each key, in seconds of its rate (a token bucket, full at the
   * start). Default 0: none, as AWS lends none above a partition's limits.
   */
  burstSeconds?: number;
  /**
   * Tables judged at AWS's own limits, not divided by the factor: a key there
   * carries one customer's requests (the limiter's counter item), a load that
   * does not grow with the number of customers, so scaling its limit down with
   * the traffic would make one request's two writes look like a hot partition.
   */
  unscaledTables?: string[];
  /** The clock, in ms (injectable for unit tests). */
  now?: () => number;
}

/** `table` or `table/index/<name>`, and the partition-key value. */
export interface KeyUsage {
  resource: string;
  key: string;
  writeUnits: number;
  readUnits: number;
  writeThrottles: number;
  readThrottles: number;
}

export interface ThrottleRecord {
  /** The DynamoDB operation, e.g. PutItem. */
  operation: string;
  /** Who sent it: the `x-sim-caller` header, or the `sim/<name>` part of the SDK's user agent, if any. */
  caller: string;
  resource: string;
  key: string;
  reason: string;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** What a key admitted lately (no burst): units at each instant, oldest first. */
interface Window {
  admitted: { at: number; units: number }[];
  /** The units of its last read: what its next read is admitted on. */
  lastReadUnits: number;
}

type Json = Record<string, unknown>;
type AttributeValue = Record<string, unknown>;

export class PartitionLimitProxy {
  readonly usage = new Map<string, KeyUsage>();
  readonly throttles: ThrottleRecord[] = [];
  /** Calls per `sim/<name>` caller and DynamoDB operation, refused or not. */
  readonly calls = new Map<string, number>();
  private readonly writeBuckets = new Map<string, Bucket>();
  private readonly readBuckets = new Map<string, Bucket>();
  private readonly writeWindows = new Map<string, Window>();
  private readonly readWindows = new Map<string, Window>();
  private readonly now: () => number;
  readonly writeRate: number;
  readonly readRate: number;
  readonly burstSeconds: number;
  /**
   * While false, every call passes uncharged: a run sets up the state the
   * service is in (its past) through the same clients, then judges from reset().
   */
  judging = true;

  private constructor(
    private readonly loopback: LoopbackServer,
    private readonly upstream: URL,
    private readonly schemas: Record<string, KeySchema>,
    readonly limits: PartitionLimits,
  ) {
    this.now = limits.now ?? Date.now;
    this.writeRate = (limits.writeUnitsPerSecond ?? 1_000) / limits.factor;
    this.readRate = (limits.readUnitsPerSecond ?? 3_000) / limits.factor;
    this.burstSeconds = limits.burstSeconds ?? 0;
  }

  /** Starts the proxy; `schemas` maps each physical table name to its keys and indexes. */
  static async start(upstreamEndpoint: string, schemas: Record<string, KeySchema>, limits: PartitionLimits): Promise<PartitionLimitProxy> {
    let proxy: PartitionLimitProxy | undefined;
    const loopback = await listenOnLoopback((request, response) => void proxy!.handle(request, response));
    proxy = new PartitionLimitProxy(loopback, new URL(upstreamEndpoint), schemas, limits);
    return proxy;
  }

  get endpoint(): string {
    return this.loopback.endpoint;
  }

  /** Forgets usage, throttles and what each key admitted (with burst: each key starts with a full bucket again). */
  reset(): void {
    this.usage.clear();
    this.throttles.length = 0;
    this.calls.clear();
    this.writeBuckets.clear();
    this.readBuckets.clear();
    this.writeWindows.clear();
    this.readWindows.clear();
  }

  /** The window a call of `units` on a key of `rate` is judged over (module comment), in ms. */
  static windowMs(units: number, rate: number): number {
    return Math.max(1_000, (units / rate) * 1_000);
  }

  close(): Promise<void> {
    return this.loopback.close();
  }

  /** Throttles counted per `resource key` (write and read), most first. */
  throttlesByKey(): { resource: string; key: string; count: number }[] {
    const counts = new Map<string, { resource: string; key: string; count: number }>();
    for (const t of this.throttles) {
      const id = `${t.resource}\u0000${t.key}`;
      const entry = counts.get(id) ?? { resource: t.resource, key: t.key, count: 0 };
      entry.count++;
      counts.set(id, entry);
    }
    return [...counts.values()].sort((a, b) => b.count - a.count);
  }

  /** The keys that consumed the most write (or read) units. */
  hottest(kind: 'write' | 'read', n = 5): KeyUsage[] {
    const units = (u: KeyUsage) => (kind === 'write' ? u.writeUnits : u.readUnits);
    return [...this.usage.values()].sort((a, b) => units(b) - units(a)).slice(0, n);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readRequestBody(request);
    if (!body) return void request.destroy();
    const operation = operationOf(request);
    const caller =
      String(request.headers['x-sim-caller'] ?? '') || (/\bsim\/([\w-]+)/.exec(String(request.headers['user-agent'] ?? ''))?.[1] ?? '');
    const callKey = `${caller || '-'} ${operation}`;
    this.calls.set(callKey, (this.calls.get(callKey) ?? 0) + 1);
    const input: Json = inputOf(body);
    try {
      const writes = await this.writesOf(operation, input);
      const reads = this.readKeysOf(operation, input);
      const refusal = this.judging ? this.admit(writes, reads) : undefined;
      if (refusal) {
        for (const write of writes) this.record(write.resource, write.key).writeThrottles += 1;
        this.throttles.push({ operation, caller, resource: refusal.resource, key: refusal.key, reason: refusal.reason });
        return throttle(response, refusal.reason, refusal.resource);
      }
      const answer = await this.forward(request, body);
      await this.chargeWrites(writes, answer);
      this.chargeReads(operation, input, answer);
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body);
    } catch {
      if (!response.headersSent) response.destroy();
    }
  }

  // --- writes ---------------------------------------------------------------

  /** The partitions a write would write, with its units; index entries only where the item carries the index's key. */
  private async writesOf(operation: string, input: Json): Promise<PlannedWrite[]> {
    const planned: PlannedWrite[] = [];
    const plan = async (kind: 'Put' | 'Update' | 'Delete', action: Json, transactional: boolean) => {
      const table = String(action.TableName ?? '');
      const schema = this.schemas[table];
      if (!schema) return;
      const multiplier = transactional ? 2 : 1;
      const key = (action.Key ?? action.Item ?? {}) as Record<string, AttributeValue>;
      const newItem = kind === 'Put' ? (action.Item as Record<string, AttributeValue>) : undefined;
      // An update or delete is charged on the item as it is, and rewrites its index entries: read it (uncharged; DynamoDB knows it).
      const oldItem = kind !== 'Put' ? await this.currentItem(table, key) : undefined;
      const size = Math.max(itemSize(newItem ?? {}), itemSize(oldItem ?? {}), itemSize(key));
      const units = Math.max(1, Math.ceil(size / 1024)) * multiplier;
      const afterUpdate = kind === 'Update' ? { table, key, multiplier } : undefined;
      planned.push({ resource: table, key: keyValue(key[schema.partitionKey]), units, conditionalCharge: true, afterUpdate });
      for (const index of schema.indexes) {
        const resource = `${table}/index/${index.name}`;
        const values = new Set<string>();
        for (const item of [oldItem, newItem]) {
          const value = item?.[index.partitionKey];
          if (value && (!index.sortKey || item?.[index.sortKey])) values.add(keyValue(value));
        }
        for (const value of values) planned.push({ resource, key: value, units, conditionalCharge: false });
      }
    };
    if (operation === 'PutItem') await plan('Put', input, false);
    else if (operation === 'UpdateItem') await plan('Update', input, false);
    else if (operation === 'DeleteItem') await plan('Delete', input, false);
    else if (operation === 'TransactWriteItems') {
      for (const item of (input.TransactItems ?? []) as Json[]) {
        if (item.Put) await plan('Put', item.Put as Json, true);
        if (item.Update) await plan('Update', item.Update as Json, true);
        if (item.Delete) await plan('Delete', item.Delete as Json, true);
      }
    } else if (operation === 'BatchWriteItem') {
      for (const [table, requests] of Object.entries((input.RequestItems ?? {}) as Record<string, Json[]>)) {
        for (const r of requests) {
          if (r.PutRequest) await plan('Put', { TableName: table, ...(r.PutRequest as Json) }, false);
          if (r.DeleteRequest) await plan('Delete', { TableName: table, ...(r.DeleteRequest as Json) }, false);
        }
      }
    }
    return planned;
  }

  /**
   * Charges the writes that happened: all of them on success; on a failed
   * condition, the table's units only. An update is charged on the larger of
   * the item before and after it (its index entries likewise).
   */
  private async chargeWrites(writes: PlannedWrite[], answer: Answer): Promise<void> {
    const failedCondition = answer.status === 400 && /ConditionalCheckFailed|TransactionCanceled/.test(answer.body.toString());
    if (answer.status !== 200 && !failedCondition) return;
    let grown = 0;
    for (const write of writes) {
      if (failedCondition && !write.conditionalCharge) continue;
      // Each action's table write comes first, its index entries after it.
      if (write.conditionalCharge) grown = 0;
      if (write.afterUpdate && !failedCondition) {
        const after = await this.currentItem(write.afterUpdate.table, write.afterUpdate.key);
        grown = Math.max(0, Math.ceil(itemSize(after ?? {}) / 1024) * write.afterUpdate.multiplier - write.units);
      }
      const units = write.units + grown;
      this.take('write', write.resource, write.key, units);
      this.record(write.resource, write.key).writeUnits += units;
    }
  }

  // --- reads ----------------------------------------------------------------

  private readKeysOf(operation: string, input: Json): { resource: string; key: string }[] {
    const table = String(input.TableName ?? '');
    const schema = this.schemas[table];
    if (operation === 'GetItem' && schema) {
      return [{ resource: table, key: keyValue((input.Key as Record<string, AttributeValue>)?.[schema.partitionKey]) }];
    }
    if (operation === 'Query' && schema) {
      const partitionKey = input.IndexName
        ? schema.indexes.find((index) => index.name === input.IndexName)?.partitionKey
        : schema.partitionKey;
      const resource = input.IndexName ? `${table}/index/${String(input.IndexName)}` : table;
      return [{ resource, key: queryPartition(input, partitionKey ?? '') }];
    }
    if (operation === 'BatchGetItem') {
      const keys: { resource: string; key: string }[] = [];
      for (const [name, request] of Object.entries(
        (input.RequestItems ?? {}) as Record<string, { Keys?: Record<string, AttributeValue>[] }>,
      )) {
        const s = this.schemas[name];
        if (s) for (const key of request.Keys ?? []) keys.push({ resource: name, key: keyValue(key[s.partitionKey]) });
      }
      return keys;
    }
    return [];
  }

  private chargeReads(operation: string, input: Json, answer: Answer): void {
    if (answer.status !== 200) return;
    const output = JSON.parse(answer.body.toString('utf8') || '{}') as Json;
    const charge = (resource: string, key: string, bytes: number, consistent: boolean) => {
      const units = Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
      this.take('read', resource, key, units);
      this.record(resource, key).readUnits += units;
    };
    const [first] = this.readKeysOf(operation, input);
    if (operation === 'GetItem' && first) {
      charge(first.resource, first.key, itemSize((output.Item ?? {}) as Record<string, AttributeValue>), input.ConsistentRead === true);
    } else if (operation === 'Query' && first) {
      const bytes = ((output.Items ?? []) as Record<string, AttributeValue>[]).reduce((sum, item) => sum + itemSize(item), 0);
      charge(first.resource, first.key, bytes, input.ConsistentRead === true);
    } else if (operation === 'BatchGetItem') {
      for (const [table, items] of Object.entries((output.Responses ?? {}) as Record<string, Record<string, AttributeValue>[]>)) {
        const schema = this.schemas[table];
        const request = ((input.RequestItems ?? {}) as Record<string, Json>)[table];
        if (!schema) continue;
        for (const item of items) charge(table, keyValue(item[schema.partitionKey]), itemSize(item), request?.ConsistentRead === true);
      }
    }
  }

  // --- buckets --------------------------------------------------------------

  /** The first key that cannot take the call, or nothing: writes need room for their units, reads for their key's last read's. */
  private admit(
    writes: PlannedWrite[],
    reads: { resource: string; key: string }[],
  ): { resource: string; key: string; reason: string } | undefined {
    for (const write of writes) {
      if (!this.hasRoom('write', write.resource, write.key, write.units)) {
        return { resource: write.resource, key: write.key, reason: `${kindOf(write.resource)}WriteKeyRangeThroughputExceeded` };
      }
    }
    for (const read of reads) {
      const expected = this.burstSeconds > 0 ? Number.MIN_VALUE : this.windowOf('read', read.resource, read.key).lastReadUnits;
      if (!this.hasRoom('read', read.resource, read.key, expected)) {
        this.record(read.resource, read.key).readThrottles += 1;
        return { resource: read.resource, key: read.key, reason: `${kindOf(read.resource)}ReadKeyRangeThroughputExceeded` };
      }
    }
    return undefined;
  }

  private rateOf(kind: 'write' | 'read', resource: string): number {
    const unscaled = this.limits.unscaledTables?.includes(resource.split('/')[0] as string) ? this.limits.factor : 1;
    return (kind === 'write' ? this.writeRate : this.readRate) * unscaled;
  }

  /** Whether the key can take `units` now: within its window's limit, or (with burst lent) while its bucket holds them. */
  private hasRoom(kind: 'write' | 'read', resource: string, key: string, units: number): boolean {
    const rate = this.rateOf(kind, resource);
    if (this.burstSeconds > 0) return this.level(kind === 'write' ? this.writeBuckets : this.readBuckets, resource, key, rate) >= units;
    const windowMs = PartitionLimitProxy.windowMs(units, rate);
    const since = this.now() - windowMs;
    let used = 0;
    for (const entry of this.windowOf(kind, resource, key).admitted) if (entry.at > since) used += entry.units;
    // A hair of slack for floating point: r·W is exact only on paper.
    return used + units <= (rate * windowMs) / 1_000 + 1e-9;
  }

  private windowOf(kind: 'write' | 'read', resource: string, key: string): Window {
    const windows = kind === 'write' ? this.writeWindows : this.readWindows;
    const id = `${resource}\u0000${key}`;
    let window = windows.get(id);
    if (!window) {
      window = { admitted: [], lastReadUnits: 0.5 };
      windows.set(id, window);
    }
    return window;
  }

  private level(buckets: Map<string, Bucket>, resource: string, key: string, rate: number): number {
    const id = `${resource}\u0000${key}`;
    const now = this.now();
    const capacity = rate * this.burstSeconds;
    const bucket = buckets.get(id) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    buckets.set(id, bucket);
    return bucket.tokens;
  }

  /** Charges units to a key: into its window (kept as long as the widest window a call of its could need), or its bucket. */
  private take(kind: 'write' | 'read', resource: string, key: string, units: number): void {
    const rate = this.rateOf(kind, resource);
    if (this.burstSeconds > 0) {
      const buckets = kind === 'write' ? this.writeBuckets : this.readBuckets;
      this.level(buckets, resource, key, rate);
      buckets.get(`${resource}\u0000${key}`)!.tokens -= units;
      return;
    }
    const window = this.windowOf(kind, resource, key);
    const now = this.now();
    window.admitted.push({ at: now, units });
    if (kind === 'read') window.lastReadUnits = units;
    const keepMs = PartitionLimitProxy.windowMs(Math.max(...window.admitted.map((entry) => entry.units)), rate);
    while ((window.admitted[0]?.at ?? now) <= now - keepMs) window.admitted.shift();
  }

  private record(resource: string, key: string): KeyUsage {
    const id = `${resource}\u0000${key}`;
    let entry = this.usage.get(id);
    if (!entry) {
      entry = { resource, key, writeUnits: 0, readUnits: 0, writeThrottles: 0, readThrottles: 0 };
      this.usage.set(id, entry);
    }
    return entry;
  }

  // --- upstream -------------------------------------------------------------

  private async currentItem(table: string, key: Record<string, AttributeValue>): Promise<Record<string, AttributeValue> | undefined> {
    const answer = await this.call('GetItem', { TableName: table, Key: key, ConsistentRead: true });
    if (answer.status !== 200) return undefined;
    return (JSON.parse(answer.body.toString('utf8')) as { Item?: Record<string, AttributeValue> }).Item;
  }

  private call(operation: string, input: Json): Promise<Answer> {
    const body = Buffer.from(JSON.stringify(input));
    return this.send(
      {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
        // DynamoDB Local takes any credentials; the signature is not checked.
        authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
        'content-length': String(body.length),
      },
      '/',
      'POST',
      body,
    );
  }

  private forward(request: IncomingMessage, body: Buffer): Promise<Answer> {
    return this.send(request.headers, request.url ?? '/', request.method ?? 'POST', body);
  }

  private send(headers: IncomingMessage['headers'], path: string, method: string, body: Buffer): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const upstream = httpRequest({ hostname: this.upstream.hostname, port: this.upstream.port, path, method, headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }));
        answer.on('error', reject);
      });
      upstream.on('error', reject);
      upstream.end(body);
    });
  }
}

interface PlannedWrite {
  resource: string;
  key: string;
  units: number;
  /** Charged even when the write's condition fails (the table's part). */
  conditionalCharge: boolean;
  /** An update's item, read again after it to charge the larger image. */
  afterUpdate?: { table: string; key: Record<string, AttributeValue>; multiplier: number };
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

const kindOf = (resource: string) => (resource.includes('/index/') ? 'Index' : 'Table');

function throttle(response: ServerResponse, reason: string, resource: string): void {
  answerDynamoDbError(
    response,
    400,
    'ProvisionedThroughputExceededException',
    'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
    {
      requestId: 'partition-limit-simulator',
      extra: { ThrottlingReasons: [{ reason, resource: `arn:aws:dynamodb:local:000000000000:table/${resource}` }] },
    },
  );
}

/** The partition-key value a Query names in its key condition (`<name> = :value`). */
function queryPartition(input: Json, partitionKey: string): string {
  const condition = String(input.KeyConditionExpression ?? '');
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, AttributeValue>;
  for (const match of condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = match[1]!.startsWith('#') ? names[match[1]!] : match[1];
    if (name === partitionKey) return keyValue(values[match[2]!]);
  }
  return '?';
}

function keyValue(value: AttributeValue | undefined): string {
  if (!value) return '?';
  const [type, v] = Object.entries(value)[0] ?? ['', ''];
  return type === 'B' ? `b:${String(v)}` : String(v);
}

/** Item size by DynamoDB's rules: names plus values; numbers about one byte per two digits plus one. */
export function itemSize(item: Record<string, AttributeValue>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

function valueSize(value: AttributeValue): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return Buffer.byteLength(String(v));
    case 'N':
      return (
        Math.ceil(
          String(v)
            .replace(/^-|\.|^0+/g, '')
            .replace(/0+$/, '').length / 2,
        ) + 1
      );
    case 'B':
      return Buffer.from(String(v), 'base64').length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'M':
      return 3 + itemSize(v as Record<string, AttributeValue>);
    case 'L':
      return 3 + (v as AttributeValue[]).reduce((sum, element) => sum + 1 + valueSize(element), 0);
    case 'SS':
      return (v as string[]).reduce((sum, s) => sum + Buffer.byteLength(s), 0);
    case 'NS':
      return (v as string[]).reduce((sum, n) => sum + valueSize({ N: n }), 0);
    default:
      return 0;
  }
}

/** The key schemas of the physical tables named in `names`, from a table-definition record. */
export function keySchemasOf(
  definitions: Record<
    string,
    { partitionKey: { name: string }; indexes: readonly { name: string; partitionKey: { name: string }; sortKey?: { name: string } }[] }
  >,
  names: Record<string, string>,
): Record<string, KeySchema> {
  const schemas: Record<string, KeySchema> = {};
  for (const [logical, definition] of Object.entries(definitions)) {
    const physical = names[logical];
    if (!physical) continue;
    schemas[physical] = {
      partitionKey: definition.partitionKey.name,
      indexes: definition.indexes.map((index) => ({
        name: index.name,
        partitionKey: index.partitionKey.name,
        sortKey: index.sortKey?.name,
      })),
    };
  }
  return schemas;
}
