/**
 * The plans we sell and their request limits (interface spec, part 8). The
 * usage plans of the CDK stack, the rate limiter, the key tools and the docs
 * all derive from this table.
 */
export type PlanName = 'free' | 'pro' | 'business' | 'enterprise';

export interface PlanLimits {
  perMinute: number;
  perDay: number;
}

export interface PlanDefinition {
  displayName: string;
  /** Enterprise limits are agreed per customer and stored on the key. */
  limits: PlanLimits | 'custom';
}

export const plans: Record<PlanName, PlanDefinition> = {
  free: { displayName: 'Free', limits: { perMinute: 60, perDay: 1_000 } },
  pro: { displayName: 'Pro', limits: { perMinute: 300, perDay: 10_000 } },
  business: { displayName: 'Business', limits: { perMinute: 1_000, perDay: 100_000 } },
  enterprise: { displayName: 'Enterprise', limits: 'custom' },
};

export const planNames = Object.keys(plans) as PlanName[];

export function isPlanName(value: unknown): value is PlanName {
  return typeof value === 'string' && Object.hasOwn(plans, value);
}

/** How long the temporary ban of a key that keeps calling after its 429s lasts (decision 9). */
export const BAN_DURATION_SECONDS = 15 * 60;
