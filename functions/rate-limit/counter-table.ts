import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanLimits } from '../../definitions/plans';
import { itemThatFailedCondition } from '../data/conditional-check';
import { dynamoCall } from '../data/dynamo-errors';
import { DependencyUnavailableError } from '../domain/errors';
import type {
  BanWrite,
  Caller,
  CounterItemState,
  CounterStore,
  CounterWrite,
  LeaseWrite,
  RefusalsWrite,
  WriteResult,
} from './counter-store';
import type { Windows } from './windows';

/** Counters are kept this long after their day, for usage reports. */
export const COUNTER_RETENTION_DAYS = 35;
const RETENTION_SECONDS = COUNTER_RETENTION_DAYS * 86_400;

/**
 * One item per set of counters and UTC day holds what the limiter's leases
 * granted in the day and in the current minute, the spare the instances were
 * recorded to hold (rate-limit/allowance.ts), each instance's last lease
 * sequence number of the minute, the refusals of the current minute and any
 * suspension. Counters are the customer's (functions/customers/, Customer):
 * every secret of it counts on them, so the old and the new secret of a
 * rotation share one set of limits. The limiter decides; this only
 * reads and writes.
 *
 * Each lease is one conditional UpdateItem, so granting is atomic under any
 * concurrency, and the item stays a few hundred bytes (one write unit per
 * lease): exactly once per lease, a write carries its instance's id and
 * sequence number and is conditional on the item holding a lower one for that
 * instance, so a repeat or a late attempt fails, and the item returned on the
 * failed condition (ReturnValuesOnConditionCheckFailure) shows our number: the
 * limiter knows the lease landed.
 *
 * The key tool writes the key's state here too (`keyRevoked`, `keyExpiresAt`,
 * `customerPerMinute`/`customerPerDay`; see customerChangeUpdates), so a lease's condition
 * refuses a revoked or expired key and applies a changed plan at once, and a
 * read shows them to requests served from a lease. The keys of a rotation
 * share the item, and one of them may be revoked or expired while the other
 * works: a key's revocation and expiry are marks of its own (keyStateNames).
 * Those writes are transactions: an UpdateItem on an item a TransactWriteItems
 * holds fails with TransactionConflictException ("Transaction conflict handling in
 * DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling;
 * the SDK does not retry it): every write here retries it with backoff
 * (CONFLICT_RETRY_DELAYS_MS, under 1 s in all), then answers 503.
 *
 * `bannedUntil` (Unix seconds) on the day's item is the ban (decision 9),
 * read by the authorizer through rate-limit/bans.ts.
 */
interface CounterItem {
  day?: string;
  dayGranted?: number;
  minuteStart?: number;
  /** Granted in minuteStart. */
  minuteGranted?: number;
  spare?: number;
  /** Instance id → its last lease sequence number in minuteStart. */
  leases?: Record<string, number>;
  refusedMinute?: number;
  refusedCount?: number;
  lastRefusalId?: string;
  /** Unix seconds: the ban's end (decision 9). */
  bannedUntil?: number;
  /** Unix seconds of the last lease (the `usage` report's last served request). */
  lastServedAt?: number;
  // keyRevoked, keyExpiresAt and the marks of other keys counting here: under the names keyStateNames gives (markOf).
  customerPerMinute?: number;
  customerPerDay?: number;
}

/**
 * The names of a secret's revocation and expiry marks on its customer's counter
 * items: marks of its own, so that revoking or expiring one secret of a
 * rotation never stops the other.
 */
export function keyStateNames(caller: { keyId: string }): { revoked: string; expiresAt: string } {
  return { revoked: `keyRevoked#${caller.keyId}`, expiresAt: `keyExpiresAt#${caller.keyId}` };
}

/** Each failed attempt means the minute moved on (and so progress was made); the bound only guards against a bug looping forever. */
const MAX_ATTEMPTS = 6;
/** Waits before each retry of a write refused by TransactionConflictException (full jitter up to each). */
export const CONFLICT_RETRY_DELAYS_MS = [25, 50, 100, 200, 400] as const;

const notSuspended = '(attribute_not_exists(bannedUntil) OR bannedUntil <= :now)';
/** With the names #keyRevoked and #keyExpiresAt of the counting key's marks (keyStateNames). */
const keyUsable = '(attribute_not_exists(#keyRevoked) AND (attribute_not_exists(#keyExpiresAt) OR #keyExpiresAt > :now))';
const samePlan =
  '(attribute_not_exists(customerPerMinute) OR (customerPerMinute = :customerPerMinute AND customerPerDay = :customerPerDay))';
/** What every lease write asks of the item, whatever its shape: no ban, a usable secret, the plan the limiter counts with. */
const keyStateHolds = `${notSuspended} AND ${keyUsable} AND ${samePlan}`;
/**
 * The spare recorded on the item stays within its cap: asked only of a lease
 * that records more spare than it releases. One that records none cannot
 * raise it, and must not be refused by it: after a plan change lowered the cap
 * under what instances were recorded to hold, such leases are what serves the
 * customer until they release it (a refusal there had no reason a client could
 * be told, and the limiter answered 500).
 */
const spareWithinCap = '(attribute_not_exists(spare) OR spare <= :spareMax)';
/** A lease's conditions, by shape and by whether it adds spare, built once (they name values, never embed them). */
const sameMinuteCondition = `minuteStart = :minute AND attribute_exists(leases) AND minuteGranted <= :minuteMax AND dayGranted <= :dayMax AND (attribute_not_exists(leases.#instance) OR leases.#instance < :seq) AND ${keyStateHolds}`;
const newMinuteCondition = `(attribute_not_exists(minuteStart) OR minuteStart < :minute) AND (attribute_not_exists(dayGranted) OR dayGranted <= :dayMax) AND ${keyStateHolds}`;
const leaseConditions = {
  same_minute: { addsSpare: `${sameMinuteCondition} AND ${spareWithinCap}`, keepsSpare: sameMinuteCondition },
  new_minute: { addsSpare: `${newMinuteCondition} AND ${spareWithinCap}`, keepsSpare: newMinuteCondition },
} as const;

export class CounterTable implements CounterStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(caller: Caller, windows: Windows, instanceId: string): Promise<CounterItemState> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({ TableName: this.tableName, Key: { pk: counterKey(caller.customerId, windows.day) }, ConsistentRead: true }),
      ),
    );
    return stateOf(Item as CounterItem | undefined, caller, windows.day, instanceId);
  }

  write(write: CounterWrite): Promise<WriteResult> {
    if (write.kind === 'lease') return this.lease(write);
    if (write.kind === 'refusals') return this.countRefusals(write);
    return this.suspend(write);
  }

  private async lease(write: LeaseWrite): Promise<WriteResult> {
    const result = await this.conditionalUpdate(counterKey(write.caller.customerId, write.windows.day), leaseUpdate(write));
    return { applied: result.updated, state: stateOf(result.item, write.caller, write.windows.day, write.instanceId) };
  }

  /** Adds a batch of refusals once (its batchId), to the latest minute the item counts refusals of. */
  private async countRefusals(write: RefusalsWrite): Promise<WriteResult> {
    const { caller, windows, refusals, batchId } = write;
    let minute = windows.minuteStart;
    let sameMinute = true;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const result = await this.conditionalUpdate(
        counterKey(caller.customerId, windows.day),
        refusalUpdate(minute, sameMinute, refusals, batchId),
      );
      const old = result.item;
      if (result.updated || old?.lastRefusalId === batchId) {
        return { applied: result.updated, state: stateOf(old, caller, windows.day, write.instanceId) };
      }
      // Refusals stamped a later minute were written first (clocks of two
      // containers differ by a few ms): count ours in that minute.
      if (old?.refusedMinute !== undefined && old.refusedMinute > minute) minute = old.refusedMinute;
      sameMinute = old?.refusedMinute !== undefined && old.refusedMinute >= minute;
    }
    throw new Error('Refusal counter kept changing under us');
  }

  /** Suspends the customer on every day item the suspension touches: the ban is the customer's, whichever secret it sends. */
  private async suspend(write: BanWrite): Promise<WriteResult> {
    const { caller, windows, until } = write;
    const days = [windows.day];
    if (until > windows.dayEnd) days.push(new Date(windows.dayEnd * 1000).toISOString().slice(0, 10));
    const items: (CounterItem | undefined)[] = [];
    for (const day of days) {
      const { Attributes } = await this.withConflictRetries(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: counterKey(caller.customerId, day) },
            UpdateExpression:
              'SET bannedUntil = :until, customerId = :customerId, #day = :day, expiresAt = if_not_exists(expiresAt, :expiresAt)',
            ExpressionAttributeNames: { '#day': 'day' },
            ExpressionAttributeValues: {
              ':until': until,
              ':customerId': caller.customerId,
              ':day': day,
              ':expiresAt': until + RETENTION_SECONDS,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      items.push(Attributes as CounterItem | undefined);
    }
    return { applied: true, state: stateOf(items[0], caller, windows.day, write.instanceId) };
  }

  private async conditionalUpdate(
    pk: string,
    update: Pick<
      UpdateCommand['input'],
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
    >,
  ): Promise<{ updated: boolean; item: CounterItem | undefined }> {
    try {
      const { Attributes } = await this.withConflictRetries(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk },
            ...update,
            ReturnValues: 'ALL_NEW',
            // The item as it is when the condition fails: tells a repeat of our own write from another's.
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { updated: true, item: (Attributes ?? {}) as CounterItem };
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') {
        return { updated: false, item: itemThatFailedCondition<CounterItem>(error) };
      }
      throw error;
    }
  }

  /**
   * Runs one write, retrying it while a key-tool transaction holds the item;
   * still conflicting after the last wait, it is a dependency failure (503).
   */
  private async withConflictRetries<T>(call: () => Promise<T>): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        return await dynamoCall(call);
      } catch (error) {
        // dynamoCall has already classed the conflict a dependency failure: look at what DynamoDB said.
        const said = error instanceof DependencyUnavailableError ? error.cause : error;
        if (!(said instanceof Error) || said.name !== 'TransactionConflictException') throw error;
        const wait = CONFLICT_RETRY_DELAYS_MS[retry];
        if (wait === undefined) throw error;
        await sleep(Math.random() * wait);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A key's revocation or expiry mark on an item, by the name keyStateNames gives it. */
function markOf(item: CounterItem | undefined, name: string): unknown {
  return (item as Record<string, unknown> | undefined)?.[name];
}

/** The item's facts for the limiter, as the asking key and instance see them. */
function stateOf(item: CounterItem | undefined, caller: Caller, day: string, instanceId: string): CounterItemState {
  const marks = keyStateNames(caller);
  const expiresAt = markOf(item, marks.expiresAt);
  const leaseSeq = item?.leases?.[instanceId];
  return {
    day,
    minuteStart: Number(item?.minuteStart ?? 0),
    minuteGranted: Number(item?.minuteGranted ?? 0),
    dayGranted: Number(item?.dayGranted ?? 0),
    spare: Number(item?.spare ?? 0),
    leaseHolders: Object.keys(item?.leases ?? {}).length,
    ...(leaseSeq !== undefined ? { leaseSeq: Number(leaseSeq) } : {}),
    ...(item?.customerPerMinute !== undefined
      ? { customerLimits: { perMinute: Number(item.customerPerMinute), perDay: Number(item.customerPerDay) } }
      : {}),
    keyRevoked: Boolean(markOf(item, marks.revoked)),
    ...(expiresAt !== undefined ? { keyExpiresAt: Number(expiresAt) } : {}),
    bannedUntil: Number(item?.bannedUntil ?? 0),
    refusedMinute: Number(item?.refusedMinute ?? 0),
    refusedCount: Number(item?.refusedCount ?? 0),
  };
}

function refusalUpdate(minute: number, sameMinute: boolean, refusals: number, batchId: string) {
  return {
    UpdateExpression: sameMinute
      ? 'SET refusedCount = refusedCount + :refusals, lastRefusalId = :batchId'
      : 'SET refusedMinute = :minute, refusedCount = :refusals, lastRefusalId = :batchId',
    ConditionExpression: sameMinute
      ? 'refusedMinute = :minute AND (attribute_not_exists(lastRefusalId) OR lastRefusalId <> :batchId)'
      : 'attribute_not_exists(refusedMinute) OR refusedMinute < :minute',
    ExpressionAttributeValues: { ':refusals': refusals, ':minute': minute, ':batchId': batchId },
  };
}

/**
 * The UpdateItem of one lease, by its shape. Conditions that no arithmetic
 * can cross: the grant keeps the minute and the day within their limits and
 * the recorded spare within its cap (DynamoDB conditions compare, they do not
 * add: the limits are passed less what the write adds).
 */
function leaseUpdate(write: LeaseWrite) {
  const { limits, take } = write;
  const dayDelta = take - write.dayReturn;
  const marks = keyStateNames(write.caller);
  const adds = addsSpare(write);
  const common = {
    condition: leaseConditions[write.shape][adds ? 'addsSpare' : 'keepsSpare'],
    names: { '#keyRevoked': marks.revoked, '#keyExpiresAt': marks.expiresAt },
    values: {
      ':minute': write.minuteStart,
      ':take': take,
      ':dayDelta': dayDelta,
      ':dayMax': limits.perDay - dayDelta,
      ':customerPerMinute': limits.perMinute,
      ':customerPerDay': limits.perDay,
      ':now': write.nowSeconds,
      ':spareDelta': write.spare - write.releaseSpare,
      ...(adds ? { ':spareMax': write.spareCap - write.spare + write.releaseSpare } : {}),
    },
  };
  if (write.shape === 'same_minute') return sameMinuteLease(write, common);
  return newMinuteLease(write, common);
}

/** Whether a lease records more spare than it releases: only such a lease is held to the spare cap. */
function addsSpare(write: LeaseWrite): boolean {
  return write.spare > write.releaseSpare;
}

/** What every shape of lease write shares: its condition (leaseConditions), the secret's marks, the limits less the grant. */
interface LeaseCommon {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

function sameMinuteLease(write: LeaseWrite, { condition, names, values }: LeaseCommon) {
  return {
    UpdateExpression:
      'SET minuteGranted = minuteGranted + :take, dayGranted = dayGranted + :dayDelta, spare = spare + :spareDelta, leases.#instance = :seq, lastServedAt = :now',
    ConditionExpression: condition,
    ExpressionAttributeNames: { ...names, '#instance': write.instanceId },
    ExpressionAttributeValues: { ...values, ':minuteMax': write.limits.perMinute - write.take, ':seq': write.seq },
  };
}

/** The minute's first lease: the item's minute and sequence numbers start again; the spare recorded carries on (it is the day's). */
function newMinuteLease(write: LeaseWrite, { condition, names, values }: LeaseCommon) {
  const { windows } = write;
  return {
    UpdateExpression:
      'SET minuteStart = :minute, minuteGranted = :take, dayGranted = if_not_exists(dayGranted, :zero) + :dayDelta, spare = if_not_exists(spare, :zero) + :spareDelta, leases = :leases, lastServedAt = :now, customerId = :customerId, #day = :day, expiresAt = :expiresAt',
    ConditionExpression: condition,
    ExpressionAttributeNames: { ...names, '#day': 'day' },
    ExpressionAttributeValues: {
      ...values,
      ':zero': 0,
      ':leases': { [write.instanceId]: write.seq },
      ':customerId': write.caller.customerId,
      ':day': windows.day,
      ':expiresAt': windows.dayEnd + RETENTION_SECONDS,
    },
  };
}

/** What the key tool changed about a key, for the functions to apply at once. */
export type CustomerChange = { revoked: true } | { expiresAtSeconds: number } | { limits: PlanLimits };

/**
 * The updates (for a TransactWriteItems beside the key's own update) that copy
 * a key's new state onto the counter items it counts on for every UTC day from
 * `fromSeconds` until `untilSeconds`: the span in which a cached authorizer
 * answer could still let the key in with its old state. Later days need
 * nothing: by then the authorizer reads the key afresh. A revocation or an
 * expiry is the key's own mark (keyStateNames); new limits hold for every key
 * counting there, as the limits are the customer's.
 */
/**
 * How far behind the change an instance's clock may be and still count on the
 * day before (a change in the first seconds after midnight must reach that
 * day's item too, or such an instance serves under the old limits). Lambda's
 * clocks are kept by NTP to milliseconds; a minute leaves room.
 */
const LAGGING_CLOCK_SECONDS = 60;

export function customerChangeUpdates(
  tableName: string,
  caller: Caller,
  change: CustomerChange,
  fromSeconds: number,
  untilSeconds: number,
) {
  const { customerId } = caller;
  const marks = keyStateNames(caller);
  const set: { expression: string; names: Record<string, string>; values: Record<string, unknown> } =
    'revoked' in change
      ? { expression: '#mark = :true', names: { '#mark': marks.revoked }, values: { ':true': true } }
      : 'expiresAtSeconds' in change
        ? { expression: '#mark = :keyExpiresAt', names: { '#mark': marks.expiresAt }, values: { ':keyExpiresAt': change.expiresAtSeconds } }
        : {
            expression: 'customerPerMinute = :customerPerMinute, customerPerDay = :customerPerDay',
            names: {},
            values: { ':customerPerMinute': change.limits.perMinute, ':customerPerDay': change.limits.perDay },
          };
  return daysBetween(fromSeconds - LAGGING_CLOCK_SECONDS, untilSeconds).map((day) => ({
    Update: {
      TableName: tableName,
      Key: { pk: counterKey(customerId, day.day) },
      UpdateExpression: `SET ${set.expression}, customerId = :customerId, #day = :day, expiresAt = if_not_exists(expiresAt, :expiresAt)`,
      ExpressionAttributeNames: { ...set.names, '#day': 'day' },
      ExpressionAttributeValues: {
        ...set.values,
        ':customerId': customerId,
        ':day': day.day,
        ':expiresAt': day.endSeconds + RETENTION_SECONDS,
      },
    },
  }));
}

function daysBetween(fromSeconds: number, untilSeconds: number): { day: string; endSeconds: number }[] {
  const days: { day: string; endSeconds: number }[] = [];
  for (let start = Math.floor(fromSeconds / 86_400) * 86_400; start <= untilSeconds; start += 86_400) {
    days.push({ day: new Date(start * 1000).toISOString().slice(0, 10), endSeconds: start + 86_400 });
  }
  return days;
}

/** The key of a set of counters' item of one UTC day (leases keep one item enough for any limit: no shards). */
export function counterKey(customerId: string, day: string): string {
  return `${customerId}#${day}`;
}
