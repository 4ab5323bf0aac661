import { isErrorObject, PetStoreError, parseRetryAfterSeconds, UnexpectedResponseError } from './errors.ts';
import { linkTarget } from './link-header.ts';
import { decideRetry, defaultRetryPolicy, type RetryPolicy } from './retry-policy.ts';
import type { ErrorCode, ListPetsQuery, NewPet, Pet } from './types.ts';

export type OperationId = 'listPets' | 'createPet' | 'getPet';

/** One wait before a retry, as the client decided it (see `onRetry`). */
export interface RetryEvent {
  operation: OperationId;
  /** The attempt that failed: 1 for the first. */
  attempt: number;
  /** The status that caused the retry; undefined for a network error. */
  status?: number;
  code?: ErrorCode;
  /** The Retry-After the API sent, in seconds. */
  retryAfterSeconds?: number;
  waitMs: number;
  reason: 'retry-after' | 'backoff';
}

export interface PetStoreClientOptions {
  /** The API's base URL, ending in /v1, e.g. https://api.example.com/v1. */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** How to wait; defaults to a timer. Tests inject one that does not really sleep. */
  sleep?: (ms: number) => Promise<void>;
  /** Random numbers in [0, 1) for the backoff jitter; defaults to Math.random. */
  random?: () => number;
  /** Makes the Idempotency-Key of each createPet; defaults to a random UUID. */
  newIdempotencyKey?: () => string;
  retry?: Partial<RetryPolicy>;
  /** Requests in flight at once; the others queue. Defaults to 8. */
  maxConcurrency?: number;
  /** Called before each wait for a retry. */
  onRetry?: (event: RetryEvent) => void;
}

export interface PetPage {
  pets: Pet[];
  /** The absolute URL of the next page (`Link: rel="next"`), when there is one. */
  nextUrl?: string;
}

/**
 * A typed client of the Pet Store API v1.
 *
 * - Retries 429 and 503 (and a 409 in-flight duplicate) after the Retry-After
 *   the API sent — never sooner — and, while it waits, holds back every other
 *   request of this client too, so that a burst never earns the key a
 *   suspension. Other transient failures (503 without Retry-After, 5xx,
 *   network errors) are retried with exponential backoff, full jitter and a cap.
 * - createPet sends an Idempotency-Key (a random UUID) and keeps it for its
 *   retries, so a retried create never makes a second pet.
 * - allPets() / listPetPages() follow `Link: rel="next"` across all pages.
 * - Errors are PetStoreError, carrying the Error object, the status and the headers.
 */
export class PetStoreClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly newIdempotencyKey: () => string;
  private readonly policy: RetryPolicy;
  private readonly slots: Semaphore;
  /** Retry-After waits in progress: no request of this client goes out before they end. */
  private readonly pauses = new Set<Promise<void>>();

  constructor(private readonly options: PetStoreClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.newIdempotencyKey = options.newIdempotencyKey ?? (() => crypto.randomUUID());
    this.policy = { ...defaultRetryPolicy, ...options.retry };
    this.slots = new Semaphore(options.maxConcurrency ?? 8);
  }

  /** Adds a pet (POST /pets). Safe to retry: one Idempotency-Key for all attempts. */
  async createPet(pet: NewPet, options: { idempotencyKey?: string } = {}): Promise<Pet> {
    const idempotencyKey = options.idempotencyKey ?? this.newIdempotencyKey();
    const { body } = await this.send<Pet>('createPet', `${this.baseUrl}/pets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `"${idempotencyKey}"` },
      body: JSON.stringify(pet),
    });
    return body;
  }

  /** One page of pets (GET /pets), in ascending id order, with the URL of the next one. */
  async listPets(query: ListPetsQuery = {}): Promise<PetPage> {
    const search = new URLSearchParams();
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    if (query.status !== undefined) search.set('status', query.status);
    const suffix = search.toString() ? `?${search}` : '';
    return this.page(`${this.baseUrl}/pets${suffix}`);
  }

  /** Every page, following `Link: rel="next"` until the last. */
  async *listPetPages(query: ListPetsQuery = {}): AsyncGenerator<PetPage> {
    let page = await this.listPets(query);
    yield page;
    while (page.nextUrl) {
      page = await this.page(page.nextUrl);
      yield page;
    }
  }

  /** Every pet, across all pages: `for await (const pet of client.allPets()) …`. */
  async *allPets(query: ListPetsQuery = {}): AsyncGenerator<Pet> {
    for await (const page of this.listPetPages(query)) yield* page.pets;
  }

  /**
   * One pet by id (GET /pets/{petId}).
   * @deprecated The API removes this operation on 2030-12-05 (it answers 410 from then on); use allPets() / listPets().
   */
  async getPet(petId: number): Promise<Pet> {
    const { body } = await this.send<Pet>('getPet', `${this.baseUrl}/pets/${encodeURIComponent(String(petId))}`, { method: 'GET' });
    return body;
  }

  private async page(url: string): Promise<PetPage> {
    const { body, headers } = await this.send<Pet[]>('listPets', url, { method: 'GET' });
    const next = linkTarget(headers.get('link'), 'next');
    if (next === undefined) return { pets: body };
    const nextUrl = new URL(next, url);
    // The API key goes to the API's own origin only.
    if (nextUrl.origin !== new URL(this.baseUrl).origin)
      throw new Error(`Refusing to follow a next link to another origin: ${nextUrl.origin}`);
    return { pets: body, nextUrl: nextUrl.href };
  }

  /** One operation, with its retries; resolves with the parsed body of a 2xx. */
  private async send<Body>(operation: OperationId, url: string, init: RequestInit): Promise<{ body: Body; headers: Headers }> {
    const headers = {
      Accept: 'application/json',
      ...(init.headers as Record<string, string>),
      Authorization: `Bearer ${this.options.apiKey}`,
    };
    const state = { retries: 0, inProgressWaitedMs: 0 };
    for (let attempt = 1; ; attempt++) {
      await this.pausesToEnd();
      let response: Response | undefined;
      let text = '';
      let networkError: unknown;
      await this.slots.acquire();
      try {
        response = await this.fetchImpl(url, { ...init, headers });
        text = await response.text();
      } catch (error) {
        networkError = error;
      } finally {
        this.slots.release();
      }

      if (response?.ok) return { body: parseJson<Body>(response, text), headers: response.headers };
      const failure = response ? errorOf(response, text) : networkError;
      const status = response?.status;
      const retryAfterSeconds = response ? parseRetryAfterSeconds(response.headers.get('retry-after')) : undefined;
      const decision = decideRetry(this.policy, state, status, retryAfterSeconds, this.random);
      if (!decision.retry) throw failure;
      if (status === 409) state.inProgressWaitedMs += decision.waitMs;
      else state.retries++;
      this.options.onRetry?.({
        operation,
        attempt,
        status,
        code: failure instanceof PetStoreError ? failure.code : undefined,
        retryAfterSeconds,
        waitMs: decision.waitMs,
        reason: decision.reason,
      });
      // A 429's or 503's Retry-After concerns the key or the service: everyone waits. A 409 concerns this create only.
      if (decision.reason === 'retry-after' && status !== 409) await this.pauseEveryone(decision.waitMs);
      else await this.sleep(decision.waitMs);
    }
  }

  /** A Retry-After applies to the key, not to one request: every request of this client waits it out. */
  private async pauseEveryone(ms: number): Promise<void> {
    const pause = this.sleep(ms);
    this.pauses.add(pause);
    try {
      await pause;
    } finally {
      this.pauses.delete(pause);
    }
  }

  private async pausesToEnd(): Promise<void> {
    while (this.pauses.size > 0) await Promise.all([...this.pauses]);
  }
}

function errorOf(response: Response, text: string): Error {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new UnexpectedResponseError(response.status, response.headers, text);
  }
  return isErrorObject(body)
    ? new PetStoreError(response.status, body, response.headers)
    : new UnexpectedResponseError(response.status, response.headers, text);
}

function parseJson<Body>(response: Response, text: string): Body {
  try {
    return JSON.parse(text) as Body;
  } catch {
    throw new UnexpectedResponseError(response.status, response.headers, text);
  }
}

/** At most `size` holders at once; the others wait in order. */
class Semaphore {
  private available: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    if (!(size >= 1)) throw new Error('maxConcurrency must be at least 1');
    this.available = size;
  }

  async acquire(): Promise<void> {
    if (this.available > 0) {
      this.available--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.available++;
  }
}
