import type { PlanName } from '../../../definitions/plans';
import type { Verdict } from '../../../functions/rate-limit';
import type { ScaleCustomer } from './workload';

/**
 * What the scale mode's clients saw, judged against docs/clients.md's "How
 * exact": a key is never served past its limits, and a 429 may come while
 * allowance is left by at most a tenth of the per-minute limit (allowance held
 * by instances its requests stopped reaching: the stranded spare). Read from
 * the answers only (served or not, X-RateLimit-*), never from the counter item.
 */
export interface AuditFigures {
  requests: number;
  served: number;
  refused: number;
  /** 429 rate_limited or quota_exceeded while the customer had been served less than the window's limit. */
  refusalsUnderLimit: number;
  /** Of those, refused while more than the documented tenth of the per-minute limit was left: must be 0. */
  refusalsBeyondBound: number;
  /** Requests served past a window's limit: must be 0. */
  servedPastLimit: number;
  /** 5xx: the limiter failed (a throttled counter call), or Lambda refused the request (no environment). */
  serverErrors: number;
  /** The same by the customer's plan: whose counter item ran out of throughput. */
  serverErrorsByPlan: Partial<Record<PlanName, number>>;
  /** Stranded spare: how far X-RateLimit-Remaining of the minute fell below the truth, as a share of the per-minute limit. */
  strandedShare: { mean: number; max: number };
}

/** The truth of one customer's windows: what was served in them. */
interface Served {
  minuteStart: number;
  inMinute: number;
  day: number;
  inDay: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export class ScaleAudit {
  private readonly served = new Map<string, Served>();
  private readonly figures: AuditFigures = {
    requests: 0,
    served: 0,
    refused: 0,
    refusalsUnderLimit: 0,
    refusalsBeyondBound: 0,
    servedPastLimit: 0,
    serverErrors: 0,
    serverErrorsByPlan: {},
    strandedShare: { mean: 0, max: 0 },
  };
  private stranded = { sum: 0, count: 0 };

  /** One answer; `counted` false during the warm-up (the truth is kept, the figures not). */
  answer(customer: ScaleCustomer, nowMs: number, admission: Verdict | 'error', counted: boolean): void {
    const truth = this.truthOf(customer.customerId, nowMs);
    if (admission !== 'error' && !admission.refusal) {
      truth.inMinute += 1;
      truth.inDay += 1;
    }
    if (!counted) return;
    this.figures.requests += 1;
    if (admission === 'error') this.serverError(customer.plan);
    else if (admission.refusal) this.judgeRefusal(customer, truth, admission.refusal.code);
    else this.judgeServed(customer, truth, admission.headers);
  }

  result(): AuditFigures {
    const mean = this.stranded.count === 0 ? 0 : this.stranded.sum / this.stranded.count;
    return { ...this.figures, strandedShare: { mean, max: this.figures.strandedShare.max } };
  }

  private serverError(plan: PlanName): void {
    this.figures.serverErrors += 1;
    this.figures.serverErrorsByPlan[plan] = (this.figures.serverErrorsByPlan[plan] ?? 0) + 1;
  }

  private judgeRefusal(customer: ScaleCustomer, truth: Served, code: string): void {
    this.figures.refused += 1;
    const { perMinute, perDay } = customer.limits;
    const left = code === 'rate_limited' ? perMinute - truth.inMinute : code === 'quota_exceeded' ? perDay - truth.inDay : 0;
    if (left <= 0) return;
    this.figures.refusalsUnderLimit += 1;
    if (left > perMinute / 10) this.figures.refusalsBeyondBound += 1;
  }

  private judgeServed(customer: ScaleCustomer, truth: Served, headers: Record<string, string>): void {
    this.figures.served += 1;
    const { perMinute, perDay } = customer.limits;
    if (truth.inMinute > perMinute || truth.inDay > perDay) this.figures.servedPastLimit += 1;
    if (Number(headers['X-RateLimit-Limit']) !== perMinute) return;
    const lowBy = Math.max(0, perMinute - truth.inMinute - Number(headers['X-RateLimit-Remaining'])) / perMinute;
    this.stranded.sum += lowBy;
    this.stranded.count += 1;
    this.figures.strandedShare.max = Math.max(this.figures.strandedShare.max, lowBy);
  }

  private truthOf(customerId: string, nowMs: number): Served {
    const minuteStart = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
    const day = Math.floor(nowMs / DAY_MS);
    let truth = this.served.get(customerId);
    if (!truth) {
      truth = { minuteStart, inMinute: 0, day, inDay: 0 };
      this.served.set(customerId, truth);
    }
    if (truth.minuteStart !== minuteStart) Object.assign(truth, { minuteStart, inMinute: 0 });
    if (truth.day !== day) Object.assign(truth, { day, inDay: 0 });
    return truth;
  }
}
