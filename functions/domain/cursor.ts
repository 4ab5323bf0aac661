import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';
import { MAX_ID, type PetStatus, petStatuses } from './pet';

/**
 * The opaque `cursor` of list pagination: the last id of the previous page, the
 * status filter it was made for and when the walk began, with a MAC so that a
 * cursor changed by hand is refused. The MAC key is not a secret worth
 * protecting: a forged cursor could only name an id, which is public, and a
 * start, which only decides whether a server's recent view of the newest pets
 * may serve the page (an early start: a view up to 10 s old, as for any walk; a
 * late one: a fresh read, as for a first page). It keeps cursors opaque, so
 * their format can change without breaking clients.
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

function mac(payload: string): Buffer {
  return createHmac('sha256', MAC_KEY).update(payload).digest().subarray(0, MAC_BYTES);
}

export function encodeCursor(position: CursorPosition): string {
  const { afterId, status, walkStartedAt } = position;
  // The leading "2" names the format, so that a later one can be told apart; the walk's start has a fixed width (14 digits
  // of ms: until the year 5138).
  const start = String(Math.min(Math.max(0, Math.floor(walkStartedAt)), 10 ** 14 - 1)).padStart(14, '0');
  const payload = `2:${start}:${afterId}:${status ?? ''}`;
  return Buffer.concat([mac(payload), Buffer.from(payload)]).toString('base64url');
}

const invalidCursor = () => new ApiError('invalid_request', 'cursor is invalid: use the URL of the Link rel="next" header as it is.');

/** Decodes a cursor made for `status`; anything else is a 400 naming the cursor. */
export function decodeCursor(cursor: string, status: PetStatus | undefined): CursorPosition {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalidCursor();
  const raw = Buffer.from(cursor, 'base64url');
  // Only the canonical spelling: base64 has spare bits a hand edit could flip unnoticed.
  if (raw.length <= MAC_BYTES || raw.toString('base64url') !== cursor) throw invalidCursor();
  const payload = raw.subarray(MAC_BYTES).toString();
  if (!timingSafeEqual(raw.subarray(0, MAC_BYTES), mac(payload))) throw invalidCursor();
  const match = /^2:(?<start>\d{14}):(?<afterId>[1-9]\d{0,15}):(?<status>[a-z]*)$/.exec(payload)?.groups;
  const afterId = Number(match?.afterId);
  const cursorStatus = match?.status || undefined;
  const walkStartedAt = Number(match?.start);
  if (!match || afterId > MAX_ID || (cursorStatus && !petStatuses.includes(cursorStatus as PetStatus))) throw invalidCursor();
  if (cursorStatus !== status) {
    throw new ApiError('invalid_request', 'cursor was made for another status filter: keep the status of the first page.');
  }
  return { afterId, status, walkStartedAt };
}
