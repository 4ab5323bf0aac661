import type { ReportedWindow } from './windows';

/** The rate-limit headers of every response to an identified caller, errors included (decision 8). */
export function rateLimitHeaders(
  window: ReportedWindow,
): Record<'X-RateLimit-Limit' | 'X-RateLimit-Remaining' | 'X-RateLimit-Reset', string> {
  return {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(window.remaining),
    'X-RateLimit-Reset': String(window.resetSeconds),
  };
}
