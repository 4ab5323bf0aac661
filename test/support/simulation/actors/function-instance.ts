import type { PlanLimits } from '../../../../definitions/plans';
import { ApiError, DependencyUnavailableError } from '../../../../functions/domain/errors';
import { CounterTable, RateLimiter } from '../../../../functions/rate-limit';
import type { SimulatedDynamoDB } from '../../simulated-dynamodb';

/** What one decision of the limiter says: its reported window, its refusal if any, and its refund. */
export type Decision = Awaited<ReturnType<RateLimiter['admit']>>;

/** How a request left the limiter: decided, or an error a handler answers (503, 401) or cannot (500). */
export type Outcome =
  | { kind: 'decided'; decision: Decision }
  | { kind: 'unavailable'; detail: string }
  | { kind: 'unauthorized' }
  | { kind: 'failed'; detail: string };

/**
 * One function instance (a Lambda execution environment) running the real
 * limiter, over its own connection to the simulated store. Its clock is true
 * time plus its skew; it may be frozen (unreachable) for spans of time; like a
 * Lambda instance it serves one request at a time.
 */
export class FunctionInstance {
  busy = false;
  /** A TransactionConflictException was answered: the limiter waits (real time, a few ms) before its retry. */
  retrying = false;
  private readonly limiter: RateLimiter;

  constructor(
    readonly id: string,
    db: ReturnType<SimulatedDynamoDB['client']>,
    counterTableName: string,
    readonly skewMs: number,
    readonly frozen: { from: number; until: number }[],
  ) {
    this.limiter = new RateLimiter(new CounterTable(db, counterTableName), () => {}, { instanceId: id });
  }

  reachableAt(nowMs: number): boolean {
    return !this.busy && !this.frozen.some((span) => span.from <= nowMs && nowMs < span.until);
  }

  clock(trueMs: number): number {
    return trueMs + this.skewMs;
  }

  /** The limiter's decision on one request of the caller the gateway let through. */
  async decide(caller: { keyId: string; customerId: string; limits: PlanLimits }, trueMs: number): Promise<Outcome> {
    try {
      const decision = await this.limiter.admit(
        { keyId: caller.keyId, customerId: caller.customerId, limits: caller.limits },
        this.clock(trueMs),
      );
      return { kind: 'decided', decision };
    } catch (error) {
      if (error instanceof DependencyUnavailableError) return { kind: 'unavailable', detail: describe(error.cause) };
      if (error instanceof ApiError && error.code === 'unauthorized') return { kind: 'unauthorized' };
      return { kind: 'failed', detail: describe(error) };
    }
  }
}

export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
