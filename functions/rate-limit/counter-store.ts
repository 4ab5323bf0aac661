import type { PlanLimits } from '../../definitions/plans';
import type { Windows } from './windows';

/**
 * What the limiter needs of the store of a customer's counters: one read and
 * one write, no decisions (implemented on DynamoDB by rate-limit/counter-table.ts).
 * Every write answers whether it applied and the counter item as it is after.
 */
export interface CounterStore {
  /** The customer's item of the window's day, read strongly consistent (`instanceId` picks the sequence number reported). */
  read(caller: Caller, windows: Windows, instanceId: string): Promise<CounterItemState>;
  write(write: CounterWrite): Promise<WriteResult>;
}

export interface WriteResult {
  applied: boolean;
  state: CounterItemState;
}

/**
 * A caller as the limiter counts it: the secret it came with (whose revocation
 * or expiry refuses it) and its customer, whose counters it counts on: one set
 * of limits, refusals and bans for the customer, whichever secret it sends.
 */
export interface Caller {
  keyId: string;
  customerId: string;
}

/** A customer's counter item of one UTC day as one read or write found it: plain facts, the limiter decides. */
export interface CounterItemState {
  /** The UTC day of the item, `YYYY-MM-DD`. */
  day: string;
  /** Unix seconds of the minute the item counts; 0 when it counts none yet. */
  minuteStart: number;
  /** Allowance granted in that minute. */
  minuteGranted: number;
  /** Allowance granted that day, net of what instances gave back. */
  dayGranted: number;
  /** Spare the instances were recorded to hold in that minute (rate-limit/allowance.ts). */
  spare: number;
  /** The last lease sequence number of the asking instance applied in that minute. */
  leaseSeq?: number;
  /** How many instances leased allowance in that minute. */
  leaseHolders: number;
  /** Limits the key tool set on the item (a plan change the authorizer's cached answer may not show yet). */
  customerLimits?: PlanLimits;
  /** The asking secret's own marks (the key tool's revocation and expiry). */
  keyRevoked: boolean;
  keyExpiresAt?: number;
  /** Unix seconds; 0 when never suspended. */
  bannedUntil: number;
  /** The refusals recorded for the ban rule, and the minute they are of. */
  refusedMinute: number;
  refusedCount: number;
}

/** The three writes: a lease (which also gives back and refunds), a batch of refusals, a suspension. */
export type CounterWrite = LeaseWrite | RefusalsWrite | BanWrite;

/** What every write names: whose item, of which windows, from which instance. */
interface WriteOf {
  caller: Caller;
  windows: Windows;
  instanceId: string;
}

/** How a lease write brings the item to its minute: the item counts this minute already, or an earlier one (or none) and the lease starts this one. */
export type LeaseShape = 'same_minute' | 'new_minute';

/** What a lease write changes of a customer's windows, as one instance's allowance (rate-limit/allowance.ts) sets it. */
export interface LeaseTerms {
  /** The minute the lease is of (the item's, when another instance's clock started it a few ms early). */
  minuteStart: number;
  shape: LeaseShape;
  /** Allowance taken of the minute and the day (the asking request's 1 and the spare); negative when it gives back. */
  take: number;
  /** Of what it takes, the spare recorded on the item as held. */
  spare: number;
  /** Spare this instance was recorded to hold in this minute, released by the write. */
  releaseSpare: number;
  /** Allowance of ended minutes this instance never served, given back to the day. */
  dayReturn: number;
}

/** One conditional write of a lease; the instance's id and its own sequence number make a repeated or late write apply once. */
export interface LeaseWrite extends WriteOf, LeaseTerms {
  kind: 'lease';
  nowSeconds: number;
  seq: number;
  limits: PlanLimits;
  spareCap: number;
}

/** Adds `refusals` refused requests to the minute's (once per batchId); the state after carries the minute's refusals. */
export interface RefusalsWrite extends WriteOf {
  kind: 'refusals';
  refusals: number;
  batchId: string;
}

/** Suspends the customer until `until` (Unix seconds): on the day's item, and the next day's if the suspension reaches it. */
export interface BanWrite extends WriteOf {
  kind: 'ban';
  until: number;
}
