/**
 * What the key tool prints: text for people, JSON for scripts. Only views of
 * keys (admin/key-admin.ts) reach here, so no hash or metering key can be
 * printed; a secret is printed by `issue` and `rotate` only, once.
 */
import { plans } from '../definitions/plans';
import { authorizer } from '../definitions/routes';
import type { DayUsage } from '../functions/rate-limit';
import { formatLimits, type KeyDetails, type KeyView } from './key-admin';

/**
 * Why a change is immediate: every request that reaches a function checks the
 * key's state in its counter update (functions/rate-limit/counter-table.ts).
 */
const atOnceNote = `The functions check this at every request; the gateway's cached authorizer answer (${authorizer.resultsCacheTtlSeconds} s) no longer matters.`;

export function isoSeconds(value: string | number): string {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function planText(key: Pick<KeyView, 'plan' | 'limits'>): string {
  return `${plans[key.plan].displayName} (${formatLimits(key.limits)})`;
}

function prefixText(key: KeyView): string {
  return `${key.displayPrefix}…`;
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function fields(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([name]) => name.length));
  return pairs.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}

export function newKeyText(heading: string, key: KeyView, secret: string): string {
  return [
    heading,
    '',
    fields([
      ['Key id', key.keyId],
      ['Display prefix', prefixText(key)],
      ['Plan', planText(key)],
      ['Owner', key.owner],
    ]),
    '',
    'Secret — shown this once and stored nowhere; hand it to the customer over a safe channel:',
    '',
    `  ${secret}`,
  ].join('\n');
}

export function newKeyJson(key: KeyView, secret: string): object {
  return { ...key, secret };
}

export function listText(keys: KeyView[]): string {
  if (keys.length === 0) return 'No keys.';
  return table(
    ['ID', 'CUSTOMER', 'PREFIX', 'PLAN', 'LIMITS', 'OWNER', 'STATUS', 'CREATED', 'EXPIRES'],
    keys.map((key) => [
      key.keyId,
      key.customerId,
      prefixText(key),
      key.plan,
      formatLimits(key.limits),
      key.owner,
      key.suspendedUntil ? `suspended until ${isoSeconds(key.suspendedUntil)}` : key.status,
      isoSeconds(key.createdAt),
      key.expiresAt ? isoSeconds(key.expiresAt) : '-',
    ]),
  );
}

export function showText(details: KeyDetails): string {
  const { key, today, lastServedAt } = details;
  return fields([
    ['Key id', key.keyId],
    ['Customer', key.customerId],
    ['Display prefix', prefixText(key)],
    ['Plan', planText(key)],
    ['Owner', key.owner],
    ['Status', key.suspendedUntil ? `suspended until ${isoSeconds(key.suspendedUntil)} (rate-limit ban: 429 key_suspended)` : key.status],
    ['Created', isoSeconds(key.createdAt)],
    ['Updated', isoSeconds(key.updatedAt)],
    ...(key.expiresAt ? [['Expires', isoSeconds(key.expiresAt)] as [string, string]] : []),
    ['Last used', lastServedAt !== undefined ? isoSeconds(lastServedAt * 1000) : 'never (in the kept counters)'],
    ['Today', `${today.requests.toLocaleString('en-US')} of ${key.limits.perDay.toLocaleString('en-US')} requests (UTC day ${today.day})`],
  ]);
}

export function showJson(details: KeyDetails): object {
  return {
    ...details.key,
    lastServedAt: details.lastServedAt !== undefined ? isoSeconds(details.lastServedAt * 1000) : null,
    today: dayJson(details.today),
  };
}

export function usageText(key: KeyView, days: DayUsage[], total: number): string {
  return [
    `Requests answered to the customer of ${key.keyId} (all its keys), on ${planText(key)}, per UTC day (allowance a function instance holds counts as answered until it is given back):`,
    '',
    table(
      ['DAY', 'REQUESTS', 'LAST REQUEST'],
      days.map((day) => [
        day.day,
        day.requests.toLocaleString('en-US'),
        day.lastServedAt !== undefined ? isoSeconds(day.lastServedAt * 1000) : '-',
      ]),
    ),
    '',
    `Total: ${total.toLocaleString('en-US')} ${total === 1 ? 'request' : 'requests'} in ${days.length} ${days.length === 1 ? 'day' : 'days'}.`,
  ].join('\n');
}

export function usageJson(key: KeyView, days: DayUsage[], total: number): object {
  return { keyId: key.keyId, days: days.map(dayJson), total };
}

function dayJson(day: DayUsage): object {
  return {
    day: day.day,
    requests: day.requests,
    lastServedAt: day.lastServedAt !== undefined ? isoSeconds(day.lastServedAt * 1000) : null,
  };
}

export function rotatedText(predecessor: KeyView, successor: KeyView, secret: string, where: string): string {
  const until =
    predecessor.status === 'expired'
      ? `${predecessor.keyId} stopped working now (no grace): its next request is refused with 401. ${atOnceNote}`
      : `${predecessor.keyId} keeps working until ${isoSeconds(predecessor.expiresAt!)}; after that only ${successor.keyId} does.`;
  return newKeyText(
    `Rotated ${predecessor.keyId} in ${where}: its successor ${successor.keyId} works from now on.\n${until}`,
    successor,
    secret,
  );
}

export function revokedText(key: KeyView, alreadyRevoked: boolean, where: string): string {
  if (alreadyRevoked) return `${key.keyId} (${prefixText(key)}) in ${where} was revoked already; nothing changed.`;
  return `Revoked ${key.keyId} (${prefixText(key)}, ${plans[key.plan].displayName}, owner ${key.owner}) in ${where}: its next request is refused with 401. ${atOnceNote}`;
}

/**
 * After a change of an Enterprise customer's own usage plan on a stage: no
 * stronger words than AWS's. AWS documents no time within which UpdateUsagePlan
 * takes effect, and calls a usage plan's limits targets that "in some cases
 * clients can exceed" (CloudFormation, AWS::ApiGateway::UsagePlan).
 */
export const usagePlanFollowsNote =
  'Its usage plan in API Gateway follows as a backstop, not as these limits: AWS documents no time within which a usage-plan change takes effect, and calls its limits targets that "in some cases clients can exceed".';

export function planChangedText(previous: KeyView, key: KeyView, unchanged: boolean, where: string): string {
  if (unchanged) return `${key.keyId} in ${where} is on ${planText(key)} already; nothing changed.`;
  return `${key.keyId} in ${where} moved from ${planText(previous)} to ${planText(key)}: the new limits apply from its next request on. ${atOnceNote}`;
}
