import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { type TableName, tables } from '../../definitions/tables';
import {
  applyUpdate,
  copyOf,
  evaluate,
  type Item,
  type Parsed,
  Placeholders,
  parseCondition,
  parseProjection,
  parseUpdate,
  UnsupportedBySimulation,
  valueAt,
} from './simulated-dynamodb-expressions';

/**
 * An in-memory DynamoDB for the customer simulation
 * (test/unit/customer-simulation.test.ts): a drop-in for the
 * DynamoDBDocumentClient our code sends GetItem, PutItem, UpdateItem,
 * DeleteItem, Query, Scan and TransactWriteItems through, with DynamoDB's
 * semantics for what our code uses (expressions: simulated-dynamodb-expressions.ts):
 * - a write whose condition fails changes nothing and fails with
 *   ConditionalCheckFailedException, carrying the item, marshalled, when the
 *   request asked for it (ReturnValuesOnConditionCheckFailure: ALL_OLD,
 *   "UpdateItem", Amazon DynamoDB API Reference,
 *   https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html);
 * - TransactWriteItems is all or nothing: a failed condition cancels it with
 *   TransactionCanceledException and one CancellationReason per item, and a
 *   repeat of its ClientRequestToken succeeds without applying it twice
 *   ("TransactWriteItems", https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html);
 * - the global secondary indexes of definitions/tables.ts (projection ALL).
 * Every read is strongly consistent, and an index too unless a test holds the
 * indexes behind their tables (holdIndexesBehind): DynamoDB's global secondary
 * indexes are eventually consistent ("Read consistency", Amazon DynamoDB
 * Developer Guide). There is no TransactionConflictException: a transaction
 * applies in one step.
 *
 * A channel is one caller's connection: `immediate` applies each call as it is
 * sent; `scheduled` queues it until the simulation lets the store apply one
 * pending call of its choosing (applyNext), so concurrent callers interleave
 * in a replayable order, and the channel's faults (drawn from the seed) may
 * throttle a call, lose the answer of a call that applied (with or without the
 * SDK's second attempt), or hold a write back to land after later ones.
 */

export interface FaultRates {
  /** ProvisionedThroughputExceededException: nothing applied. */
  throttle: number;
  /** Applied, the answer lost: a TimeoutError, unless the SDK's second attempt (sdkRetry) answers. */
  lostAnswer: number;
  /** Of lost answers, the share the SDK's second attempt (maxAttempts 2) sends again and answers. */
  sdkRetry: number;
  /** A write held back: the caller gets a TimeoutError now, and the write lands later, after later writes. */
  late: number;
}

export const noFaults: FaultRates = { throttle: 0, lostAnswer: 0, sdkRetry: 0, late: 0 };

/** One call as the store applied it: for the simulation's checks of what a caller saw. */
export interface AppliedCall {
  /** The store's order of calls applied (reads too). */
  seq: number;
  channel: string;
  command: 'Get' | 'Put' | 'Update' | 'Delete' | 'Query' | 'Scan' | 'TransactWrite';
  input: Record<string, unknown>;
  /** The item the caller was shown: what it read, what the write left (ALL_NEW), or what failed the condition. */
  item?: Item;
  /** `not_applied`: throttled, or held back to land later. */
  outcome: 'ok' | 'condition_failed' | 'not_applied';
  /**
   * What the channel did: `throttle` (nothing applied), `held_back` (a late
   * write sent: it lands later as `late`), `lost_answer` (applied, its answer
   * lost), `sdk_retry` (the SDK's second attempt after a lost answer).
   */
  fault?: 'throttle' | 'held_back' | 'late' | 'lost_answer' | 'sdk_retry';
}

export interface ChannelOptions {
  name: string;
  mode: 'immediate' | 'scheduled';
  faults?: FaultRates;
  /** Draws for the faults and the order of pending calls: the simulation's seeded generator. */
  random?: () => number;
}

type Command = { input: unknown; constructor: { name: string } };

interface PendingCall {
  channel: ChannelOptions;
  command: Command;
  settle?: { resolve: (value: unknown) => void; reject: (error: unknown) => void };
}

interface Table {
  name: string;
  keyNames: string[];
  partitionKey: string;
  sortKey?: string;
  indexes: { name: string; partitionKey: string; sortKey?: string }[];
  items: Map<string, Item>;
}

const metadata = { $metadata: {} };

export class SimulatedDynamoDB {
  /** Calls applied so far, reads included. */
  seq = 0;
  /** What the store applied, for the checks (kept only while `recording`). */
  readonly log: AppliedCall[] = [];
  recording = false;
  private readonly tables = new Map<string, Table>();
  private readonly pending: PendingCall[] = [];
  private readonly late: PendingCall[] = [];
  private readonly tokens = new Set<string>();
  private readonly listeners: ((call: AppliedCall) => void)[] = [];
  /** While set, a Query of an index sees each table's items as they were when the indexes were held. */
  private heldIndexes?: Map<string, Item[]>;

  constructor(tableNames: Record<TableName, string>) {
    for (const [table, definition] of Object.entries(tables) as [TableName, (typeof tables)[TableName]][]) {
      const sortKey = 'sortKey' in definition ? (definition.sortKey as { name: string }).name : undefined;
      this.tables.set(tableNames[table], {
        name: tableNames[table],
        partitionKey: definition.partitionKey.name,
        ...(sortKey ? { sortKey } : {}),
        keyNames: [definition.partitionKey.name, ...(sortKey ? [sortKey] : [])],
        indexes: definition.indexes.map((index) => ({
          name: index.name,
          partitionKey: index.partitionKey.name,
          ...('sortKey' in index ? { sortKey: (index.sortKey as { name: string }).name } : {}),
        })),
        items: new Map(),
      });
    }
  }

  /** A document client over this store, as one caller. */
  client(options: ChannelOptions): DynamoDBDocumentClient {
    const send = (command: Command) => {
      if (options.mode === 'immediate') return this.answer(options, command);
      return new Promise((resolve, reject) => this.pending.push({ channel: options, command, settle: { resolve, reject } }));
    };
    return { send, destroy: () => {} } as unknown as DynamoDBDocumentClient;
  }

  /** Hears of every call applied. */
  onApplied(listener: (call: AppliedCall) => void): void {
    this.listeners.push(listener);
  }

  /** Calls sent on scheduled channels and not applied yet, and late writes not landed yet. */
  get waiting(): number {
    return this.pending.length + this.late.length;
  }

  /** Applies one waiting call, chosen by `random`: a pending call (answered, or faulted) or a late write landing. */
  applyNext(random: () => number): void {
    const index = Math.floor(random() * this.waiting);
    if (index < this.pending.length) {
      const [call] = this.pending.splice(index, 1);
      const { resolve, reject } = call!.settle!;
      this.answer(call!.channel, call!.command).then(resolve, reject);
      return;
    }
    const [write] = this.late.splice(index - this.pending.length, 1);
    try {
      this.execute(write!.channel, write!.command, 'late');
    } catch {
      // A late write's answer reaches no one.
    }
  }

  /** An item as stored (a copy), for the simulation's checks. */
  item(tableName: string, key: Item): Item | undefined {
    const stored = this.table(tableName).items.get(this.keyOf(this.table(tableName), key));
    return stored && copyOf(stored);
  }

  /** The first item whose `attribute` is `value` (a copy), for the simulation's checks. */
  lookUp(tableName: string, attribute: string, value: unknown): Item | undefined {
    for (const item of this.table(tableName).items.values()) if (item[attribute] === value) return copyOf(item);
    return undefined;
  }

  /** Applies one call as the channel's faults decide, and answers it. */
  private answer(channel: ChannelOptions, command: Command): Promise<unknown> {
    const faults = channel.faults ?? noFaults;
    const draw = channel.random ?? (() => 1);
    const write = !(command instanceof GetCommand || command instanceof QueryCommand || command instanceof ScanCommand);
    const notApplied = (fault: 'throttle' | 'held_back') =>
      this.applied({
        channel: channel.name,
        input: command.input as Record<string, unknown>,
        command: commandName(command),
        outcome: 'not_applied',
        fault,
      });
    if (draw() < faults.throttle) {
      notApplied('throttle');
      return Promise.reject(throttled());
    }
    if (write && draw() < faults.late) {
      notApplied('held_back');
      this.late.push({ channel, command });
      return Promise.reject(timedOut());
    }
    try {
      if (draw() >= faults.lostAnswer) return Promise.resolve(this.execute(channel, command));
      const first = () => this.execute(channel, command, 'lost_answer');
      try {
        first();
      } catch {
        // The first attempt's answer is lost whatever it was.
      }
      if (draw() < faults.sdkRetry) return Promise.resolve(this.execute(channel, command, 'sdk_retry'));
      return Promise.reject(timedOut());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Applies one call now; throws what DynamoDB would answer with. */
  private execute(channel: ChannelOptions, command: Command, fault?: AppliedCall['fault']): unknown {
    const input = command.input as Record<string, unknown>;
    const call = { channel: channel.name, input, ...(fault ? { fault } : {}) };
    if (command instanceof GetCommand) return this.get(input, call);
    if (command instanceof PutCommand) return this.write('Put', input, call);
    if (command instanceof UpdateCommand) return this.write('Update', input, call);
    if (command instanceof DeleteCommand) return this.write('Delete', input, call);
    if (command instanceof QueryCommand) return this.query(input, call);
    if (command instanceof ScanCommand) return this.scan(input, call);
    if (command instanceof TransactWriteCommand) return this.transactWrite(input, call);
    throw new UnsupportedBySimulation(`the command ${command.constructor.name}`);
  }

  private applied(call: Omit<AppliedCall, 'seq'>): void {
    const done = { ...call, seq: ++this.seq };
    if (this.recording) this.log.push(done);
    for (const listener of this.listeners) listener(done);
  }

  private get(input: Record<string, unknown>, call: CallContext) {
    refuseOptions(input, [
      'TableName',
      'Key',
      'ConsistentRead',
      'ProjectionExpression',
      'ExpressionAttributeNames',
      'ReturnConsumedCapacity',
    ]);
    const table = this.table(input.TableName);
    if (typeof input.ProjectionExpression === 'string') {
      new Placeholders(input.ExpressionAttributeNames as Record<string, string>).checkUse([parseProjection(input.ProjectionExpression)]);
    }
    const projection = projectionOf(input);
    const stored = table.items.get(this.keyOf(table, input.Key as Item));
    this.applied({ ...call, command: 'Get', outcome: 'ok', ...(stored ? { item: copyOf(stored) } : {}) });
    return { ...metadata, ...(stored ? { Item: projection(stored) } : {}) };
  }

  private write(kind: 'Put' | 'Update' | 'Delete', input: Record<string, unknown>, call: CallContext) {
    const table = this.table(input.TableName);
    const change = this.change(kind, table, input);
    const before = table.items.get(change.key);
    if (change.condition && !evaluate(change.condition.tree, before, change.placeholders)) {
      this.applied({ ...call, command: kind, outcome: 'condition_failed', ...(before ? { item: copyOf(before) } : {}) });
      throw conditionFailed(before, input.ReturnValuesOnConditionCheckFailure);
    }
    const after = change.after(before);
    if (after) table.items.set(change.key, after);
    else table.items.delete(change.key);
    this.applied({ ...call, command: kind, outcome: 'ok', ...(after ? { item: copyOf(after) } : {}) });
    return { ...metadata, ...returnedValues(input.ReturnValues, before, after) };
  }

  /** What one write (alone or in a transaction) would do: its item's key, its condition, and the item after. */
  private change(kind: 'Put' | 'Update' | 'Delete' | 'ConditionCheck', table: Table, input: Record<string, unknown>) {
    refuseOptions(input, writeOptions[kind]);
    const placeholders = new Placeholders(
      input.ExpressionAttributeNames as Record<string, string>,
      input.ExpressionAttributeValues as Record<string, unknown>,
    );
    const condition = typeof input.ConditionExpression === 'string' ? parseCondition(input.ConditionExpression) : undefined;
    const update = kind === 'Update' ? parseUpdate(String(input.UpdateExpression ?? '')) : undefined;
    placeholders.checkUse([condition, update].filter((parsed): parsed is Parsed<never> => parsed !== undefined));
    const keyItem = (kind === 'Put' ? input.Item : input.Key) as Item;
    const key = this.keyOf(table, keyItem);
    const after = (before: Item | undefined): Item | undefined => {
      if (kind === 'Put') return withoutUndefined(keyItem);
      if (kind === 'Delete') return undefined;
      if (kind === 'ConditionCheck') return before;
      const start = before ?? Object.fromEntries(table.keyNames.map((name) => [name, keyItem[name]]));
      return applyUpdate(start, update!.tree, placeholders, table.keyNames);
    };
    return { key, condition, placeholders, after };
  }

  /** From now on, every index answers as of now: writes to the tables reach them only at catchUpIndexes. */
  holdIndexesBehind(): void {
    this.heldIndexes = new Map([...this.tables].map(([name, table]) => [name, [...table.items.values()].map(copyOf)]));
  }

  catchUpIndexes(): void {
    this.heldIndexes = undefined;
  }

  private query(input: Record<string, unknown>, call: CallContext) {
    refuseOptions(input, [
      'TableName',
      'IndexName',
      'KeyConditionExpression',
      'ExpressionAttributeNames',
      'ExpressionAttributeValues',
      'ProjectionExpression',
      'ConsistentRead',
      'ReturnConsumedCapacity',
    ]);
    const table = this.table(input.TableName);
    const index = input.IndexName === undefined ? table : table.indexes.find((candidate) => candidate.name === input.IndexName);
    if (!index) throw validation(`The table does not have the specified index: ${String(input.IndexName)}`);
    const placeholders = new Placeholders(
      input.ExpressionAttributeNames as Record<string, string>,
      input.ExpressionAttributeValues as Record<string, unknown>,
    );
    const keyCondition = parseCondition(String(input.KeyConditionExpression));
    const projection = typeof input.ProjectionExpression === 'string' ? parseProjection(input.ProjectionExpression) : undefined;
    placeholders.checkUse([keyCondition, ...(projection ? [projection] : [])]);
    checkKeyCondition(keyCondition.tree, placeholders, index);
    const items = (index !== table && this.heldIndexes?.get(table.name)) || [...table.items.values()];
    const found = items.filter((item) => item[index.partitionKey] !== undefined && evaluate(keyCondition.tree, item, placeholders));
    if (index.sortKey) found.sort((a, b) => compareKeys(a[index.sortKey!], b[index.sortKey!]));
    this.applied({ ...call, command: 'Query', outcome: 'ok' });
    const project = projectionOf(input);
    return { ...metadata, Items: found.map(project), Count: found.length, ScannedCount: found.length };
  }

  private scan(input: Record<string, unknown>, call: CallContext) {
    refuseOptions(input, ['TableName', 'ExclusiveStartKey', 'ReturnConsumedCapacity']);
    if (input.ExclusiveStartKey !== undefined) throw new UnsupportedBySimulation('a Scan from an ExclusiveStartKey (one page holds all)');
    const items = [...this.table(input.TableName).items.values()].map((item) => copyOf(item));
    this.applied({ ...call, command: 'Scan', outcome: 'ok' });
    return { ...metadata, Items: items, Count: items.length, ScannedCount: items.length };
  }

  private transactWrite(input: Record<string, unknown>, call: CallContext) {
    refuseOptions(input, ['TransactItems', 'ClientRequestToken', 'ReturnConsumedCapacity']);
    const token = input.ClientRequestToken as string | undefined;
    if (token !== undefined && this.tokens.has(token)) {
      this.applied({ ...call, command: 'TransactWrite', outcome: 'ok' });
      return { ...metadata };
    }
    const changes = (input.TransactItems as Record<string, Record<string, unknown>>[]).map((entry) => this.transactItem(entry));
    const keys = changes.map((change) => `${change.table.name}\u0000${change.key}`);
    if (new Set(keys).size !== keys.length) throw validation('Transaction request cannot include multiple operations on one item');
    const befores = changes.map((change) => change.table.items.get(change.key));
    const failed = changes.map(
      (change, index) => !!change.condition && !evaluate(change.condition.tree, befores[index], change.placeholders),
    );
    if (failed.some(Boolean)) {
      this.applied({ ...call, command: 'TransactWrite', outcome: 'condition_failed' });
      throw cancelled(changes, befores, failed);
    }
    const afters = changes.map((change, index) => change.after(befores[index]));
    changes.forEach((change, index) => {
      const after = afters[index];
      if (after) change.table.items.set(change.key, after);
      else change.table.items.delete(change.key);
    });
    if (token !== undefined) this.tokens.add(token);
    this.applied({ ...call, command: 'TransactWrite', outcome: 'ok' });
    return { ...metadata };
  }

  private transactItem(entry: Record<string, Record<string, unknown>>) {
    const kinds = Object.keys(entry) as ('Put' | 'Update' | 'Delete' | 'ConditionCheck')[];
    if (kinds.length !== 1 || !['Put', 'Update', 'Delete', 'ConditionCheck'].includes(kinds[0]!)) {
      throw validation('A transaction item must name exactly one of Put, Update, Delete, ConditionCheck');
    }
    const kind = kinds[0]!;
    const input = entry[kind]!;
    const table = this.table(input.TableName);
    if (kind === 'ConditionCheck' && typeof input.ConditionExpression !== 'string')
      throw validation('A ConditionCheck needs a ConditionExpression');
    return { ...this.change(kind, table, input), table, returnOld: input.ReturnValuesOnConditionCheckFailure };
  }

  private table(name: unknown): Table {
    const table = this.tables.get(String(name));
    if (!table) throw new ResourceNotFoundException({ message: 'Requested resource not found', ...metadata });
    return table;
  }

  private keyOf(table: Table, item: Item | undefined): string {
    const parts = table.keyNames.map((name) => {
      const value = item?.[name];
      if (typeof value !== 'string' && typeof value !== 'number') throw validation('The provided key element does not match the schema');
      return value;
    });
    if (Object.keys(item ?? {}).length < table.keyNames.length) throw validation('The provided key element does not match the schema');
    return JSON.stringify(parts);
  }
}

type CallContext = Pick<AppliedCall, 'channel' | 'input' | 'fault'>;

function commandName(command: Command): AppliedCall['command'] {
  const names: [unknown, AppliedCall['command']][] = [
    [GetCommand, 'Get'],
    [PutCommand, 'Put'],
    [UpdateCommand, 'Update'],
    [DeleteCommand, 'Delete'],
    [QueryCommand, 'Query'],
    [ScanCommand, 'Scan'],
    [TransactWriteCommand, 'TransactWrite'],
  ];
  const found = names.find(([type]) => command instanceof (type as new (...args: never[]) => unknown));
  if (!found) throw new UnsupportedBySimulation(`the command ${command.constructor.name}`);
  return found[1];
}

const writeOptions: Record<'Put' | 'Update' | 'Delete' | 'ConditionCheck', string[]> = {
  Put: ['TableName', 'Item', 'ConditionExpression', 'ExpressionAttributeNames', 'ExpressionAttributeValues', 'ReturnValues'],
  Update: [
    'TableName',
    'Key',
    'UpdateExpression',
    'ConditionExpression',
    'ExpressionAttributeNames',
    'ExpressionAttributeValues',
    'ReturnValues',
  ],
  Delete: ['TableName', 'Key', 'ConditionExpression', 'ExpressionAttributeNames', 'ExpressionAttributeValues', 'ReturnValues'],
  ConditionCheck: ['TableName', 'Key', 'ConditionExpression', 'ExpressionAttributeNames', 'ExpressionAttributeValues'],
};

/** Options the store does not model are refused, never ignored. */
function refuseOptions(input: Record<string, unknown>, known: string[]): void {
  const allowed = new Set([...known, 'ReturnValuesOnConditionCheckFailure', 'ReturnConsumedCapacity']);
  const unknown = Object.keys(input).filter((option) => input[option] !== undefined && !allowed.has(option));
  if (unknown.length > 0) throw new UnsupportedBySimulation(`the request options ${unknown.join(', ')}`);
  const returnOld = input.ReturnValuesOnConditionCheckFailure;
  if (returnOld !== undefined && returnOld !== 'ALL_OLD' && returnOld !== 'NONE')
    throw validation(`ReturnValuesOnConditionCheckFailure ${String(returnOld)}`);
}

function projectionOf(input: Record<string, unknown>): (item: Item) => Item {
  if (typeof input.ProjectionExpression !== 'string') return (item) => copyOf(item);
  const placeholders = new Placeholders(input.ExpressionAttributeNames as Record<string, string>, {});
  const parsed = parseProjection(input.ProjectionExpression);
  const attributes = parsed.tree.map((path) => placeholders.path(path)[0]!);
  return (item) => Object.fromEntries(attributes.filter((name) => item[name] !== undefined).map((name) => [name, copyOf(item[name])]));
}

/** A key condition names the partition key with `=`, and the sort key at most with one comparison or BETWEEN. */
function checkKeyCondition(
  condition: ReturnType<typeof parseCondition>['tree'],
  placeholders: Placeholders,
  index: { partitionKey: string; sortKey?: string },
): void {
  const parts = condition.kind === 'and' ? [condition.left, condition.right] : [condition];
  const named = (part: (typeof parts)[number]): string | undefined => {
    if (part.kind === 'compare' && part.left.kind === 'path') return placeholders.path(part.left.path).join('.');
    if (part.kind === 'between' && part.subject.kind === 'path') return placeholders.path(part.subject.path).join('.');
    return undefined;
  };
  const partition = parts.find((part) => part.kind === 'compare' && part.op === '=' && named(part) === index.partitionKey);
  const rest = parts.filter((part) => part !== partition);
  if (!partition || rest.length > 1 || (rest[0] && named(rest[0]) !== index.sortKey)) {
    throw validation('Query condition missed key schema element or names a non-key attribute');
  }
}

function compareKeys(a: unknown, b: unknown): number {
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}

function withoutUndefined(item: Item): Item {
  return copyOf(item);
}

function returnedValues(returnValues: unknown, before: Item | undefined, after: Item | undefined): { Attributes?: Item } {
  if (returnValues === undefined || returnValues === 'NONE') return {};
  if (returnValues === 'ALL_NEW') return after ? { Attributes: copyOf(after) } : {};
  if (returnValues === 'ALL_OLD') return before ? { Attributes: copyOf(before) } : {};
  throw new UnsupportedBySimulation(`ReturnValues ${String(returnValues)}`);
}

function conditionFailed(before: Item | undefined, returnOld: unknown): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    ...metadata,
    ...(returnOld === 'ALL_OLD' && before ? { Item: marshall(before, { removeUndefinedValues: true }) } : {}),
  });
}

function cancelled(changes: { returnOld: unknown }[], befores: (Item | undefined)[], failed: boolean[]): TransactionCanceledException {
  const reasons = changes.map((change, index) => {
    if (!failed[index]) return { Code: 'None' };
    const before = befores[index];
    const item = change.returnOld === 'ALL_OLD' && before ? { Item: marshall(before, { removeUndefinedValues: true }) } : {};
    return { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', ...item };
  });
  const message = `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`;
  return new TransactionCanceledException({ message, Message: message, CancellationReasons: reasons, ...metadata });
}

function validation(message: string): DynamoDBServiceException {
  return new DynamoDBServiceException({ name: 'ValidationException', $fault: 'client', message, ...metadata });
}

function throttled(): ProvisionedThroughputExceededException {
  return new ProvisionedThroughputExceededException({
    message: 'The level of configured provisioned throughput for the table was exceeded.',
    ...metadata,
  });
}

/** What the SDK throws when no answer came in time: no $fault, so dynamo-errors.ts classes it a dependency failure (503). */
function timedOut(): Error {
  return Object.assign(new Error('Connection timed out after 1000 ms'), { name: 'TimeoutError' });
}

export { UnsupportedBySimulation, valueAt };
