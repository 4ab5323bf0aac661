import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';
import { MAX_ID, type PetStatus, petStatuses } from './pet';

/**
 * The opaque `cursor` of list pagination: the last id of the previous page, the
 * status filter it was made for and when the walk began, with a MAC.
 *
 * The MAC's key is here in the source, so the MAC proves only that a cursor was
 * not changed by accident (a URL cut short or mis-copied), not that this
 * service issued it: anyone can sign a cursor (docs/decisions.md, decision 5).
 * What keeps a cursor built by hand harmless is that every field is read as
 * strictly as a query parameter, so that a value this service could not have
 * issued is a 400 naming `cursor`: an id the next page starts after that leaves
 * room for one more id (1 … 2^53−2), a status that is one of the three and the
 * request's, a walk start neither before the service existed nor later than
 * its clock. Within those, a forged cursor can only start a page where a client
 * may start one anyway (ids are public), or change when the walk began, which
 * only decides whether a server's recent view of the newest pets may serve the
 * page (an early start: a view up to 10 s old, as for any walk; a late one: a
 * fresh read, as for a first page). A secret key would buy no further promise,
 * and would cost every list function a secret to fetch and rotate.
 */
export interface CursorPosition {
  afterId: number;
  status: PetStatus | undefined;
  /**
   * When the walk's first page was asked for (ms since the epoch, the service's
   * clock): a page may be read from a view of the newest pets taken since then
   * (functions/domain/list-views.ts).
   */
  walkStartedAt: number;
}

const MAC_KEY = 'petstore-list-cursor-v1';
const MAC_BYTES = 12;
/** The largest id a next page can start after: the one below the largest id (decision 3). */
export const MAX_CURSOR_AFTER_ID = MAX_ID - 1;
/** No walk began before the service existed: no cursor we issued carries an earlier start. */
export const EARLIEST_WALK_START = Date.UTC(2026, 0, 1);
/**
 * How far a walk's start may lie ahead of the clock of the server reading it:
 * the page before was served by another instance, whose clock may run a little
 * ahead (Lambda's are synchronised; a minute is far beyond their drift).
 */
export const WALK_START_CLOCK_ALLOWANCE_MS = 60_000;

function mac(payload: string): Buffer {
  return createHmac('sha256', MAC_KEY).update(payload).digest().subarray(0, MAC_BYTES);
}

/** A cursor of this payload, signed: encodeCursor's last step (tests sign payloads of their own with it). */
export function signedCursor(payload: string): string {
  return Buffer.concat([mac(payload), Buffer.from(payload)]).toString('base64url');
}

export function encodeCursor(position: CursorPosition): string {
  const { afterId, status, walkStartedAt } = position;
  // The leading "2" names the format, so that a later one can be told apart; the walk's start has a fixed width (14 digits
  // of ms: until the year 5138).
  const start = String(Math.min(Math.max(0, Math.floor(walkStartedAt)), 10 ** 14 - 1)).padStart(14, '0');
  return signedCursor(`2:${start}:${afterId}:${status ?? ''}`);
}

const invalidCursor = () => new ApiError('invalid_request', 'cursor is invalid: use the URL of the Link rel="next" header as it is.');

/**
 * Decodes a cursor made for `status`, read at `now` (the service's clock);
 * anything this service could not have issued is a 400 naming the cursor.
 */
export function decodeCursor(cursor: string, status: PetStatus | undefined, now: number): CursorPosition {
  const payload = verifiedPayload(cursor);
  const match = /^2:(?<start>\d{14}):(?<afterId>[1-9]\d{0,15}):(?<status>[a-z]*)$/.exec(payload)?.groups;
  if (!match) throw invalidCursor();
  const afterId = Number(match.afterId);
  const walkStartedAt = Number(match.start);
  const cursorStatus = match.status || undefined;
  if (afterId > MAX_CURSOR_AFTER_ID) throw invalidCursor();
  if (walkStartedAt < EARLIEST_WALK_START || walkStartedAt > now + WALK_START_CLOCK_ALLOWANCE_MS) throw invalidCursor();
  if (cursorStatus !== undefined && !petStatuses.includes(cursorStatus as PetStatus)) throw invalidCursor();
  if (cursorStatus !== status) {
    throw new ApiError('invalid_request', 'cursor was made for another status filter: keep the status of the first page.');
  }
  return { afterId, status, walkStartedAt };
}

/** The payload of a cursor in its one canonical spelling, with a MAC that matches it. */
function verifiedPayload(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalidCursor();
  const raw = Buffer.from(cursor, 'base64url');
  // Only the canonical spelling: base64 has spare bits a hand edit could flip unnoticed.
  if (raw.length <= MAC_BYTES || raw.toString('base64url') !== cursor) throw invalidCursor();
  const payload = raw.subarray(MAC_BYTES).toString();
  if (!timingSafeEqual(raw.subarray(0, MAC_BYTES), mac(payload))) throw invalidCursor();
  return payload;
}
