/**
 * A few names for tests that look at the counter item itself (what the
 * limiter wrote, a store fault on it), beside the door (rate-limit/index.ts):
 * the item's key, the windows a moment falls in, the spare cap the item
 * keeps, and the shapes of a caller and of a write.
 */
export { spareCap } from './allowance';
export type { Caller, CounterWrite } from './counter-store';
export { counterKey } from './counter-table';
export { windowsAt } from './windows';
