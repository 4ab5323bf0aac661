import type { PetLayout } from './id-blocks';
import type { BlockQueries, CounterCopies } from './list-ports';
import { ListViews } from './list-views';
import type { PetStatus } from './pet';
import { walkPage } from './pet-walk';
import type { PetPage, PetPages } from './pets';

export interface PetListOptions {
  layout: PetLayout;
  /** The service's clock: createdAt and block lifetimes are on it, so sealing is judged on it. */
  clock: () => number;
  /** Real elapsed time, for how long views are trusted; a monotonic clock by default (a test's clock may stand in for Date.now). */
  cacheClock?: () => number;
  /** How many block ranges the instance keeps (RANGE_CACHE_ENTRIES by default: functions/domain/list-views.ts). */
  rangeCacheEntries?: number;
}

/**
 * The list use case of one function instance: a page is the walk's
 * (functions/domain/pet-walk.ts) over the instance's views
 * (functions/domain/list-views.ts), which read through two ports that
 * functions/data/ implements: the pets' blocks and the block counter's copies.
 */
export class PetList implements PetPages {
  private readonly views: ListViews;

  constructor(
    pets: BlockQueries,
    counter: CounterCopies,
    private readonly options: PetListOptions,
  ) {
    this.views = new ListViews(pets, counter, {
      layout: options.layout,
      clock: options.clock,
      cacheClock: options.cacheClock ?? (() => performance.now()),
      rangeCacheEntries: options.rangeCacheEntries,
    });
  }

  listAfter(afterId: number, limit: number, status: PetStatus | undefined, walkStartedAt = Number.POSITIVE_INFINITY): Promise<PetPage> {
    return walkPage({ afterId, limit, status, walkStartedAt }, this.views, this.views, this.options.layout);
  }
}
