/**
 * The rules of key administration, as plain functions over a target (local
 * DynamoDB, or a deployed stage with its API Gateway metering): the command
 * line in keys-cli.ts only parses and prints.
 *
 * Secrets: the secret of a new key is returned once, by issueKey and rotateKey,
 * and never stored; views of keys carry the display prefix only — never the
 * secret, its hash or the metering key.
 */
import { randomUUID } from 'node:crypto';
import { isDeploymentCheck } from '../definitions/deployment-check';
import { type PlanLimits, type PlanName, plans } from '../definitions/plans';
import {
  API_KEY_PREFIX,
  type ApiKeyRecord,
  displayPrefixOf,
  generateApiKey,
  type KeyState,
  keyState,
  limitsOf,
  meteringOf,
  ownerProblem,
} from '../functions/customers';
import { DependencyUnavailableError } from '../functions/domain/errors';
import { COUNTER_RETENTION_DAYS, type DayUsage, UsageCounters } from '../functions/rate-limit';
import { AdminError, describeError } from './errors';
import { type KeyAdminTarget, type MeteringChange, nothingToChange } from './targets/target';

const DAY_MS = 86_400_000;

export interface KeyView {
  keyId: string;
  /** The customer the key is a secret of: the id of its first key (a rotation's keys share it). */
  customerId: string;
  displayPrefix: string;
  plan: PlanName;
  owner: string;
  status: KeyState;
  limits: PlanLimits;
  createdAt: string;
  updatedAt: string;
  /** Set on a rotated key: it stops working at this instant. */
  expiresAt?: string;
  /** Set while the rate limiter bans the key (status `suspended`): the ban ends at this instant. */
  suspendedUntil?: string;
}

export interface PlanChoice {
  plan: PlanName;
  /** Enterprise keys only. */
  customLimits?: PlanLimits;
}

/** Notes for the administrator about clean-up that could not be finished; the key itself is consistent. */
export type Warnings = string[];

export function effectiveStatus(record: ApiKeyRecord, now: number, bannedUntilMs?: number): KeyState {
  return keyState(record, now, bannedUntilMs);
}

/** What may be shown of a key: everything but the secret's hash and the metering key. */
export function viewOf(record: ApiKeyRecord, now: number, bannedUntilMs?: number): KeyView {
  const status = effectiveStatus(record, now, bannedUntilMs);
  return {
    keyId: record.keyId,
    customerId: record.customerId,
    displayPrefix: record.displayPrefix,
    plan: record.plan,
    owner: record.owner,
    status,
    limits: limitsOf(record),
    createdAt: record.createdAt,
    // The key's or its customer's last change, whichever is later.
    updatedAt: record.customerUpdatedAt > record.updatedAt ? record.customerUpdatedAt : record.updatedAt,
    ...(record.expiresAt !== undefined ? { expiresAt: record.expiresAt } : {}),
    ...(status === 'suspended' && bannedUntilMs !== undefined ? { suspendedUntil: new Date(bannedUntilMs).toISOString() } : {}),
  };
}

/** A plan and its limits as the administrator asked for them: custom limits for enterprise and only there. */
export function planChoice(plan: PlanName, limits: { perMinute?: number; perDay?: number } = {}): PlanChoice {
  const given = limits.perMinute !== undefined || limits.perDay !== undefined;
  const fixed = plans[plan].limits;
  if (fixed !== 'custom') {
    if (given) {
      throw new AdminError(
        `--per-minute and --per-day are for enterprise keys only; the ${plans[plan].displayName} plan allows ${formatLimits(fixed)}.`,
      );
    }
    return { plan };
  }
  const { perMinute, perDay } = limits;
  if (perMinute === undefined || perDay === undefined) {
    throw new AdminError('An enterprise key needs its own limits: pass --per-minute N and --per-day N.');
  }
  if (perDay < perMinute) throw new AdminError(`--per-day (${perDay}) must be at least --per-minute (${perMinute}).`);
  return { plan, customLimits: { perMinute, perDay } };
}

export function validOwner(owner: string): string {
  const trimmed = owner.trim();
  const problem = ownerProblem(trimmed);
  // The shared rule's own words (definitions/fields/readable-text.ts), as a pet's name gets them.
  if (problem !== undefined) throw new AdminError(`--owner names the customer and ${problem}.`);
  return trimmed;
}

/** The longest rotation grace: both keys work during it, so it is kept short. */
export const MAX_GRACE_MS = 30 * DAY_MS;
const durationUnits: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: DAY_MS };

/** `90s`, `30m`, `24h`, `7d` (or `0`) in milliseconds. */
export function parseGrace(text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  // A bare number is ambiguous, except 0.
  if (!match || (match[2] === '' && Number(match[1]) !== 0)) {
    throw new AdminError(`--grace must be a duration such as 90s, 30m, 24h or 7d, not "${text}".`);
  }
  const ms = match[2] === '' ? 0 : Number(match[1]) * durationUnits[match[2]!]!;
  if (ms > MAX_GRACE_MS) throw new AdminError('--grace can be at most 30d: both keys work during the grace.');
  return ms;
}

export function formatLimits(limits: PlanLimits): string {
  return `${limits.perMinute.toLocaleString('en-US')}/min, ${limits.perDay.toLocaleString('en-US')}/day`;
}

export async function issueKey(
  target: KeyAdminTarget,
  input: PlanChoice & { owner: string },
  now: number,
): Promise<{ secret: string; key: KeyView; warnings: Warnings }> {
  // The secret exists before the first attempt: every retry writes this same key.
  const { secret, record } = generateApiKey({ plan: input.plan, owner: validOwner(input.owner), customLimits: input.customLimits, now });
  // Metering first: a key in DynamoDB without its API Gateway key would be refused by API Gateway.
  const { warnings } = await meteredWrite(await target.metering.enrol(meteringOf(record)), {
    write: () => target.keys.insert(record),
    landed: async () => (await target.keys.findByHash(record.keyHash))?.keyId === record.keyId,
    unknown: `it is unknown whether key ${record.keyId} was created. Run \`petstore-keys show ${record.keyId}\`: if it is there, its secret is ${secret} (shown only now); if not, run the command again`,
  });
  return { secret, key: viewOf(record, now), warnings };
}

/** Every customer's key (the deployment check's is none), filtered by plan and (effective) status, oldest first. */
export async function listKeys(target: KeyAdminTarget, filter: { plan?: PlanName; status?: KeyState }, now: number): Promise<KeyView[]> {
  const records = (await target.keys.scanAll()).filter((record) => !isDeploymentCheck(record.keyId));
  // A ban is on the rate limiter's item of today (one that crosses midnight is on both days): one read per key that could be banned.
  const today = UsageCounters.daysBack(now, 1)[0]!;
  const views = await Promise.all(
    records.map(async (record) =>
      keyState(record, now) === 'active'
        ? viewOf(record, now, (await target.counters.day(record, today)).bannedUntilMs)
        : viewOf(record, now),
    ),
  );
  return views
    .filter(
      (key) => (filter.plan === undefined || key.plan === filter.plan) && (filter.status === undefined || key.status === filter.status),
    )
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId));
}

export interface KeyDetails {
  key: KeyView;
  today: DayUsage;
  /** Unix seconds of the last served request in the counters' retention, if any. */
  lastServedAt?: number;
}

export async function showKey(target: KeyAdminTarget, keyId: string, now: number): Promise<KeyDetails> {
  const record = await requireKey(target, keyId);
  const days = UsageCounters.daysBack(now, Math.min(COUNTER_RETENTION_DAYS, daysSince(record.createdAt, now) + 1));
  const today = await target.counters.day(record, days[0]!);
  let lastServedAt = today.lastServedAt;
  // One GetItem per day, newest first, back to the key's creation at most.
  for (const day of days.slice(1)) {
    if (lastServedAt !== undefined) break;
    lastServedAt = (await target.counters.day(record, day)).lastServedAt;
  }
  return { key: viewOf(record, now, today.bannedUntilMs), today, ...(lastServedAt !== undefined ? { lastServedAt } : {}) };
}

/** Requests answered per UTC day to the key's customer (every secret of it), oldest day first, today last. */
export async function keyUsage(
  target: KeyAdminTarget,
  keyId: string,
  numberOfDays: number,
  now: number,
): Promise<{ key: KeyView; days: DayUsage[]; total: number }> {
  if (!Number.isInteger(numberOfDays) || numberOfDays < 1 || numberOfDays > COUNTER_RETENTION_DAYS) {
    throw new AdminError(`--days must be from 1 to ${COUNTER_RETENTION_DAYS} (counters are kept ${COUNTER_RETENTION_DAYS} days).`);
  }
  const record = await requireKey(target, keyId);
  const days = await Promise.all(
    UsageCounters.daysBack(now, numberOfDays)
      .reverse()
      .map((day) => target.counters.day(record, day)),
  );
  return { key: viewOf(record, now), days, total: days.reduce((sum, day) => sum + day.requests, 0) };
}

/**
 * Issues a new secret of an active key's customer (whose plan, limits,
 * counters, ban and usage plan it shares: all are the customer's, so an
 * Enterprise customer keeps its custom limits) and lets the old secret work
 * until now + grace. Both happen in one DynamoDB transaction.
 */
export async function rotateKey(
  target: KeyAdminTarget,
  keyId: string,
  graceMs: number,
  now: number,
): Promise<{ secret: string; successor: KeyView; predecessor: KeyView; warnings: Warnings }> {
  const old = await requireKey(target, keyId);
  const status = effectiveStatus(old, now);
  if (status !== 'active') throw new AdminError(`${keyId} is ${status}: only an active key can be rotated.`);
  if (old.expiresAt !== undefined) {
    throw new AdminError(`${keyId} was rotated already and stops working at ${old.expiresAt}: rotate its successor instead.`);
  }
  // The successor and the transaction's token exist before the first attempt: every retry makes this same rotation.
  // It counts on the old key's counters (down a chain of rotations, the first key's): both secrets share one set of limits.
  const { secret, record } = generateApiKey({ ...old, now });
  const expiresAt = new Date(now + graceMs).toISOString();
  const token = randomUUID();
  // The customer's usage plan and metering key are its own, not the secret's: a rotation changes nothing in API Gateway.
  const { warnings } = await meteredWrite(nothingToChange, {
    write: () => target.keys.insertSuccessor(record, old, expiresAt, token),
    landed: async () => (await target.keys.findByHash(record.keyHash))?.keyId === record.keyId,
    unknown: `it is unknown whether ${keyId} was rotated. Run \`petstore-keys show ${record.keyId}\`: if that successor is there, its secret is ${secret} (shown only now) and ${keyId} stops working at ${expiresAt}; if not, ${keyId} is unchanged: run the command again`,
  });
  return {
    secret,
    successor: viewOf(record, now),
    predecessor: viewOf({ ...old, expiresAt, updatedAt: record.createdAt }, now),
    warnings,
  };
}

/** Revokes a key for good. Revoking a revoked key again finishes any metering clean-up left over. */
export async function revokeKey(
  target: KeyAdminTarget,
  keyId: string,
  now: number,
  allow: { retiredCheckKey?: boolean } = {},
): Promise<{ key: KeyView; alreadyRevoked: boolean; warnings: Warnings }> {
  const record = await requireKey(target, keyId, allow.retiredCheckKey);
  // The customer's metering stays while another of its secrets works.
  const change = (await otherWorkingSecret(target, record, now)) ? nothingToChange : await target.metering.withdraw(meteringOf(record));
  if (record.status === 'revoked') {
    await change.finish();
    return { key: viewOf(record, now), alreadyRevoked: true, warnings: [] };
  }
  const updatedAt = new Date(now).toISOString();
  const token = randomUUID();
  const { result, warnings } = await meteredWrite(change, {
    write: () => target.keys.revoke(record, updatedAt, token),
    landed: async () => {
      const now = await target.keys.findByHash(record.keyHash);
      return now?.status === 'revoked' && now.updatedAt === updatedAt ? now : false;
    },
    unknown: `it is unknown whether ${keyId} was revoked. Run \`petstore-keys show ${keyId}\`, and run the command again if it is not revoked`,
  });
  return { key: viewOf(result, now), alreadyRevoked: false, warnings };
}

/** Moves a key to another plan (or an enterprise key to other limits). */
export async function setPlan(
  target: KeyAdminTarget,
  keyId: string,
  choice: PlanChoice,
  now: number,
): Promise<{ key: KeyView; previous: KeyView; unchanged: boolean; warnings: Warnings }> {
  const record = await requireKey(target, keyId);
  const previous = viewOf(record, now);
  const status = effectiveStatus(record, now);
  if (status === 'revoked' || status === 'expired') {
    throw await notWorkingRefusal(target, record, status, now);
  }
  const unfinished = usagePlanUnfinished(target, keyId, choice);
  if (record.plan === choice.plan && sameLimits(record.customLimits, choice.customLimits)) {
    // Run again, it finishes what a run before left undone: a usage plan is lowered only after the write.
    return {
      key: previous,
      previous,
      unchanged: true,
      warnings: await finished(await target.metering.changePlan(meteringOf(record), meteringOf(record)), unfinished),
    };
  }
  const updatedAt = new Date(now).toISOString();
  const { customLimits: _old, ...rest } = record;
  const after: ApiKeyRecord = {
    ...rest,
    plan: choice.plan,
    customerUpdatedAt: updatedAt,
    ...(choice.customLimits ? { customLimits: choice.customLimits } : {}),
  };
  const token = randomUUID();
  const { result, warnings } = await meteredWrite(await target.metering.changePlan(meteringOf(record), meteringOf(after)), {
    write: () => target.keys.changePlan(record, record, choice, updatedAt, token),
    landed: async () => {
      const now = await target.keys.findByHash(record.keyHash);
      const landed = now?.customerUpdatedAt === updatedAt && now.plan === choice.plan && sameLimits(now.customLimits, choice.customLimits);
      return landed ? after : false;
    },
    unknown: `it is unknown whether ${keyId} moved to the ${plans[choice.plan].displayName} plan. Run \`petstore-keys show ${keyId}\`, and run the command again if it did not`,
    unfinished,
  });
  return { key: viewOf(result, now), previous, unchanged: false, warnings };
}

/** Why a key that no longer works cannot move its customer, and what to do instead. */
async function notWorkingRefusal(target: KeyAdminTarget, record: ApiKeyRecord, status: KeyState, now: number): Promise<AdminError> {
  if (await otherWorkingSecret(target, record, now)) {
    return new AdminError(
      `${record.keyId} is ${status}: change the plan of customer ${record.customerId} through its working key (\`petstore-keys list\` shows the keys of each customer).`,
    );
  }
  return new AdminError(
    `${record.keyId} is ${status}, and customer ${record.customerId} has no working key left: there is no plan to change. To serve ${record.owner} again, issue a new key (\`petstore-keys issue --plan <plan> --owner <name>\`), which starts a new customer.`,
  );
}

/**
 * The warning when a usage plan could not be lowered after the write: the
 * plan is then higher than the customer's limits, which our own counters
 * enforce (safe), and the same command, run again, lowers it.
 */
function usagePlanUnfinished(target: KeyAdminTarget, keyId: string, choice: PlanChoice): (error: string) => string {
  const limits = choice.customLimits ? ` --per-minute ${choice.customLimits.perMinute} --per-day ${choice.customLimits.perDay}` : '';
  return (error) =>
    `The usage plan in API Gateway was not lowered to the new limits (${error}): it allows more until it is, and the API's own limits apply meanwhile. Run \`petstore-keys set-plan ${keyId} ${choice.plan}${limits}\` on ${target.name} again to lower it.`;
}

/** Whether a secret of the record's customer other than the record itself works at `now` (found by the customer's index). */
async function otherWorkingSecret(target: KeyAdminTarget, record: ApiKeyRecord, now: number): Promise<boolean> {
  const secrets = (await target.keys.customerWithSecrets(record.customerId))?.secrets ?? [];
  return secrets.some((other) => other.keyId !== record.keyId && keyState(other, now) === 'active');
}

async function requireKey(target: KeyAdminTarget, keyId: string, checkKeyAllowed = false): Promise<ApiKeyRecord> {
  if (isDeploymentCheck(keyId) && !checkKeyAllowed) throw new AdminError(checkKeyRefusal(keyId));
  const record = /^\S+$/.test(keyId) ? await target.keys.findById(keyId) : undefined;
  if (!record) throw new AdminError(`No key ${shownKeyArgument(keyId)} in ${target.name}: ${notFoundHint(keyId)}`);
  return record;
}

/**
 * The pre-traffic check's key (definitions/deployment-check.ts) is no
 * customer's: the stack makes it and the check re-creates it when it stops
 * working, so the key tool neither lists nor changes it, but for retiring the
 * key of a replaced secret (which the check no longer uses).
 */
function checkKeyRefusal(keyId: string): string {
  return `${keyId} is the pre-traffic deployment check's own key, not a customer's: the stack manages it and the check re-creates it if it stops working. Only to retire the key of a replaced secret: \`petstore-keys revoke ${keyId} --retire-check-key\`.`;
}

/**
 * A command's key argument as a message may show it: a key id whole; anything
 * else (a secret pasted where the id belongs, say) no further than a display
 * prefix goes, so no message puts a secret into scrollback or a CI log.
 */
function shownKeyArgument(argument: string): string {
  if (/^key_\w{1,64}$/.test(argument)) return `"${argument}"`;
  const shown = argument.startsWith(API_KEY_PREFIX) ? displayPrefixOf(argument) : argument.slice(0, 8);
  return `"${shown}${shown.length < argument.length ? '…' : ''}"`;
}

function notFoundHint(argument: string): string {
  return argument.includes(API_KEY_PREFIX)
    ? 'that is a secret, and commands take a key id (key_…): `petstore-keys list` shows each key id beside its display prefix.'
    : '`petstore-keys list` shows the key ids.';
}

/** Tries of one DynamoDB write when DynamoDB does not answer, and the waits between them. */
export const WRITE_RETRY_DELAYS_MS = [200, 1_000] as const;

interface SettledWrite<T> {
  /** The write; safe to repeat (same record, same transaction token). */
  write: () => Promise<T>;
  /** Reads back whether the write landed: its result (or true) if so, false if it did not. */
  landed: () => Promise<T | boolean>;
  /** What the administrator is told when even the read-back fails: what may be true and how to find out. */
  unknown: string;
  /** What the administrator is told when the metering change's finish fails; unset, that clean-up is unfinished. */
  unfinished?: (error: string) => string;
}

/**
 * The DynamoDB write after a metering change. A write DynamoDB did not answer
 * may have landed, so it is retried (it is idempotent), and when every try
 * fails the outcome is read back: the administrator is told exactly what is
 * now true — or, when the read fails too, what may be true and how to check.
 * The metering change is undone only once the write is known not to have
 * landed (so API Gateway and DynamoDB never disagree about a written key); once
 * it landed, the change is finished. A failed finish leaves only clean-up, reported.
 */
async function meteredWrite<T>(change: MeteringChange, settled: SettledWrite<T>): Promise<{ result: T; warnings: Warnings }> {
  let result: T;
  try {
    result = await retriedWrite(settled);
  } catch (error) {
    if (!(error instanceof OutcomeUnknownError)) {
      await undoOrExplain(change, error);
      throw error;
    }
    const landed: T | boolean | typeof unreadable = await settled.landed().catch(() => unreadable);
    if (landed === unreadable) throw new AdminError(`${describeError(error.cause)} After ${error.tries} tries, ${settled.unknown}.`);
    if (landed === false || landed === undefined) {
      await undoOrExplain(change, error.cause);
      throw new AdminError(`${describeError(error.cause)} Checked afterwards: nothing was written. Run the command again.`);
    }
    result = landed === true ? (undefined as T) : (landed as T);
  }
  return { result, warnings: await finished(change, settled.unfinished) };
}

const cleanUpUnfinished = (error: string) => `Clean-up in API Gateway is unfinished: ${error}`;

/** Finishes a metering change; a failure is a warning (the key itself is consistent). */
async function finished(change: MeteringChange, unfinished = cleanUpUnfinished): Promise<Warnings> {
  try {
    await change.finish();
    return [];
  } catch (finishError) {
    return [unfinished(describeError(finishError))];
  }
}

const unreadable = Symbol('the read-back failed too');

/** Every try failed without an answer (or a retry was refused after an earlier try may have landed). */
class OutcomeUnknownError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly tries: number,
  ) {
    super('outcome unknown', { cause });
  }
}

async function retriedWrite<T>({ write }: SettledWrite<T>): Promise<T> {
  let unanswered: unknown;
  for (let tryIndex = 0; tryIndex <= WRITE_RETRY_DELAYS_MS.length; tryIndex++) {
    try {
      return await write();
    } catch (error) {
      // A refusal after an unanswered try may be our own landed write meeting its condition: read back.
      if (unanswered !== undefined && !(error instanceof DependencyUnavailableError)) throw new OutcomeUnknownError(error, tryIndex + 1);
      if (!(error instanceof DependencyUnavailableError)) throw error;
      unanswered = error;
      const delay = WRITE_RETRY_DELAYS_MS[tryIndex];
      if (delay !== undefined) await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  throw new OutcomeUnknownError(unanswered, WRITE_RETRY_DELAYS_MS.length + 1);
}

async function undoOrExplain(change: MeteringChange, error: unknown): Promise<void> {
  try {
    await change.undo();
  } catch (undoError) {
    throw new AdminError(`${describeError(error)} Undoing the API Gateway change failed too: ${describeError(undoError)}`);
  }
}

function sameLimits(a: PlanLimits | undefined, b: PlanLimits | undefined): boolean {
  return a?.perMinute === b?.perMinute && a?.perDay === b?.perDay;
}

function daysSince(iso: string, now: number): number {
  return Math.max(0, Math.floor(now / DAY_MS) - Math.floor(Date.parse(iso) / DAY_MS));
}
