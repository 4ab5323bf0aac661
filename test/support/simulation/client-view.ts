import type { PlanLimits } from '../../../definitions/plans';

/**
 * What the customer simulation's auditor (auditor.ts) reads: what the clients
 * were answered and when, what the administrator did and saw, and the facts
 * of the world the docs bound by (how many function instances, how far their
 * clocks drift, which calls the store faulted). Nothing here is the counter
 * item's storage: the auditor judges the service as its users see it.
 */

/** One answer to a client's request. Times are the simulation's true time, in ms. */
export interface Answer {
  request: number;
  /** Which of the customer's secrets it sent (`secret 1`, `secret 2`, …). */
  secret: string;
  sentMs: number;
  answeredMs: number;
  /** `gateway` for what API Gateway answered by itself (a cached Deny or 401), else the function instance. */
  by: string;
  /** The answering instance's clock (its `Date` header), for a function's answer. */
  serverMs?: number;
  status: 200 | 401 | 429 | 500 | 503;
  code?: string;
  rateLimit?: { limit: number; remaining: number; reset: number };
  retryAfter?: number;
  /** A 503 of a request the limiter had let through (its charge refunded). */
  refunded?: boolean;
  /** For a 500: what failed. */
  detail?: string;
}

/** What the key tool did, answered at `atMs` (it is answered at once). */
export type AdminRecord =
  | { atMs: number; kind: 'issue' | 'set-plan'; limits: PlanLimits }
  | { atMs: number; kind: 'rotate'; secret: string; graceEndMs: number }
  | { atMs: number; kind: 'revoke'; secret: string };

/** The key tool's `usage` of one day, asked at `atMs` with no request in flight. */
export interface UsageReport {
  atMs: number;
  /** How many answers had come (in `answers` order) when it was asked. */
  afterAnswers: number;
  day: string;
  requests: number;
}

/** A call of a function instance the store faulted (the world's doing, not the service's). */
export interface Fault {
  atMs: number;
  instance: string;
  fault: string;
  write: boolean;
}

export interface ClientView {
  answers: Answer[];
  admin: AdminRecord[];
  usage: UsageReport[];
  faults: Fault[];
  /** Function instances that served the customer. */
  instances: number;
  /** The largest distance of an instance's clock from true time. */
  maxSkewMs: number;
  /** Whether a 503's refund may run after its instance served other requests (the lease moved on). */
  lateRefunds: boolean;
}
