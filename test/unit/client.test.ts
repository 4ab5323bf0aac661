import {
  decideRetry,
  defaultRetryPolicy,
  fullJitter,
  linkTarget,
  PetStoreClient,
  type PetStoreClientOptions,
  PetStoreError,
  parseRetryAfterSeconds,
  type RetryEvent,
  UnexpectedResponseError,
} from '../../client';

/**
 * The client's retry, backoff, pagination and error rules, against a scripted
 * fetch: no network, no real sleeping (the injected sleep records each wait).
 */
const baseUrl = 'https://api.petstore.example/v1';
const rex = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
const error = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { code, message: `${code}.`, status }, headers);

function scripted(
  answers: (Response | Error | ((request: Request) => Response | Promise<Response>))[],
  options: Partial<PetStoreClientOptions> = {},
) {
  const requests: Request[] = [];
  const sleeps: number[] = [];
  const retries: RetryEvent[] = [];
  const client = new PetStoreClient({
    baseUrl,
    apiKey: 'psk_test',
    fetch: async (input, init) => {
      const request = new Request(input, init);
      requests.push(request);
      const answer = answers.shift();
      if (answer === undefined) throw new Error('no more scripted answers');
      if (answer instanceof Error) throw answer;
      return typeof answer === 'function' ? answer(request) : answer;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    onRetry: (event) => retries.push(event),
    ...options,
  });
  return { client, requests, sleeps, retries };
}

describe('retries', () => {
  it('waits exactly Retry-After after a 429 or a 503 that sends one, then retries', async () => {
    const { client, sleeps, retries } = scripted([
      error(429, 'rate_limited', { 'Retry-After': '17' }),
      error(503, 'service_unavailable', { 'Retry-After': '2' }),
      json(200, [rex]),
    ]);
    expect(await client.listPets()).toEqual({ pets: [rex] });
    expect(sleeps).toEqual([17_000, 2_000]);
    expect(retries).toEqual([
      {
        operation: 'listPets',
        attempt: 1,
        status: 429,
        code: 'rate_limited',
        retryAfterSeconds: 17,
        waitMs: 17_000,
        reason: 'retry-after',
      },
      {
        operation: 'listPets',
        attempt: 2,
        status: 503,
        code: 'service_unavailable',
        retryAfterSeconds: 2,
        waitMs: 2_000,
        reason: 'retry-after',
      },
    ]);
  });

  it('backs off exponentially with full jitter and a cap when there is no Retry-After, and gives up after maxRetries', async () => {
    const failures = Array.from({ length: 6 }, () => error(503, 'service_unavailable'));
    const { client, sleeps } = scripted(failures, { random: () => 0.999, retry: { baseDelayMs: 100, maxDelayMs: 500, maxRetries: 5 } });
    const thrown = (await client.listPets().catch((caught: unknown) => caught)) as PetStoreError;
    expect(thrown).toBeInstanceOf(PetStoreError);
    expect(thrown).toMatchObject({ status: 503, code: 'service_unavailable' });
    // Ceilings 100, 200, 400, then capped at 500.
    expect(sleeps).toEqual([99, 199, 399, 499, 499]);
  });

  it('draws each backoff uniformly between 0 and the ceiling', () => {
    expect(fullJitter({ baseDelayMs: 200, maxDelayMs: 20_000 }, 0, () => 0)).toBe(0);
    expect(fullJitter({ baseDelayMs: 200, maxDelayMs: 20_000 }, 3, () => 0.5)).toBe(800);
    expect(fullJitter({ baseDelayMs: 200, maxDelayMs: 20_000 }, 20, () => 0.5)).toBe(10_000);
  });

  it('retries network errors with backoff', async () => {
    const { client, sleeps } = scripted([new TypeError('fetch failed'), new TypeError('fetch failed'), json(200, [])]);
    expect(await client.listPets()).toEqual({ pets: [] });
    expect(sleeps).toEqual([100, 200]);
  });

  it('does not retry a 4xx other than 409 and 429', async () => {
    for (const [status, code] of [
      [400, 'invalid_request'],
      [401, 'unauthorized'],
      [404, 'not_found'],
      [410, 'gone'],
      [413, 'payload_too_large'],
      [415, 'unsupported_media_type'],
      [422, 'idempotency_key_reused'],
    ] as const) {
      const { client, requests } = scripted([error(status, code)]);
      await expect(client.listPets()).rejects.toMatchObject({ status, code });
      expect(requests).toHaveLength(1);
    }
  });

  it('gives a Retry-After longer than maxRetryAfterMs (a used-up day, a suspended key) back at once', async () => {
    const { client, sleeps } = scripted([error(429, 'quota_exceeded', { 'Retry-After': '3600' })]);
    const thrown = (await client.listPets().catch((caught: unknown) => caught)) as PetStoreError;
    expect(thrown).toMatchObject({ status: 429, code: 'quota_exceeded', retryAfterSeconds: 3600 });
    expect(sleeps).toEqual([]);
  });

  it('retries a 409 request_in_progress with the same Idempotency-Key, and gets the original pet', async () => {
    const { client, requests, sleeps } = scripted([error(409, 'request_in_progress', { 'Retry-After': '1' }), json(201, rex)], {
      newIdempotencyKey: () => 'key-1',
    });
    expect(await client.createPet({ name: 'Rex', categoryId: 1 })).toEqual(rex);
    expect(sleeps).toEqual([1_000]);
    expect(requests.map((request) => request.headers.get('idempotency-key'))).toEqual(['"key-1"', '"key-1"']);
    expect(await requests[1]?.json()).toEqual({ name: 'Rex', categoryId: 1 });
  });

  it('holds back every other request of the client while it waits out a Retry-After', async () => {
    let endPause: () => void = () => undefined;
    let pauseStarted: () => void = () => undefined;
    const paused = new Promise<void>((resolve) => (pauseStarted = resolve));
    const { client, requests } = scripted([error(429, 'rate_limited', { 'Retry-After': '30' }), json(200, []), json(200, [])], {
      sleep: () => {
        pauseStarted();
        return new Promise<void>((resolve) => (endPause = resolve));
      },
    });
    const first = client.listPets();
    await paused;
    expect(requests).toHaveLength(1);
    const second = client.listPets({ status: 'sold' });
    await settled();
    expect(requests).toHaveLength(1); // still waiting: the key is rate limited
    endPause();
    await Promise.all([first, second]);
    expect(requests).toHaveLength(3);
  });

  it('keeps at most maxConcurrency requests in flight', async () => {
    // Each answer waits until the test releases it: what is in flight is exactly what is unreleased.
    const unreleased: (() => void)[] = [];
    const answer = () => new Promise<Response>((resolve) => unreleased.push(() => resolve(json(201, rex))));
    const { client } = scripted(
      Array.from({ length: 10 }, () => answer),
      { maxConcurrency: 3 },
    );
    const creates = Promise.all(Array.from({ length: 10 }, () => client.createPet({ name: 'Rex', categoryId: 1 })));
    const inFlight: number[] = [];
    for (let released = 0; released < 10; released++) {
      await settled();
      inFlight.push(unreleased.length - released);
      unreleased[released]?.();
    }
    await creates;
    expect(inFlight).toEqual([3, 3, 3, 3, 3, 3, 3, 3, 2, 1]);
  });

  it('decides from the policy alone', () => {
    const fresh = { retries: 0, inProgressWaitedMs: 0 };
    expect(decideRetry(defaultRetryPolicy, fresh, 429, 60, Math.random)).toEqual({ retry: true, waitMs: 60_000, reason: 'retry-after' });
    expect(decideRetry(defaultRetryPolicy, { ...fresh, retries: 5 }, 429, 1, Math.random)).toEqual({ retry: false });
    expect(decideRetry(defaultRetryPolicy, fresh, 400, undefined, Math.random)).toEqual({ retry: false });
    expect(decideRetry(defaultRetryPolicy, { retries: 5, inProgressWaitedMs: 29_000 }, 409, 1, Math.random)).toEqual({
      retry: true,
      waitMs: 1_000,
      reason: 'retry-after',
    });
    expect(decideRetry(defaultRetryPolicy, { retries: 0, inProgressWaitedMs: 29_500 }, 409, 1, Math.random)).toEqual({ retry: false });
  });

  it('keeps retrying a 409 in-progress create beyond maxRetries, for up to maxInProgressWaitMs in all, without holding back other requests', async () => {
    const inProgress = () => error(409, 'request_in_progress', { 'Retry-After': '1' });
    const { client, sleeps } = scripted([...Array.from({ length: 12 }, inProgress), json(201, rex)], { newIdempotencyKey: () => 'stale' });
    expect(await client.createPet({ name: 'Rex', categoryId: 1 })).toEqual(rex);
    expect(sleeps).toEqual(Array.from({ length: 12 }, () => 1_000));

    const { client: impatient } = scripted(Array.from({ length: 4 }, inProgress), { retry: { maxInProgressWaitMs: 3_000 } });
    await expect(impatient.createPet({ name: 'Rex', categoryId: 1 })).rejects.toMatchObject({ status: 409, code: 'request_in_progress' });
  });
});

describe('requests', () => {
  it('sends the bearer key, JSON, and a fresh quoted UUID as Idempotency-Key on every create', async () => {
    const { client, requests } = scripted([json(201, rex), json(201, rex)]);
    await client.createPet({ name: 'Rex', categoryId: 1 });
    await client.createPet({ name: 'Rex', categoryId: 1 });
    const [first, second] = requests as [Request, Request];
    expect(first.method).toBe('POST');
    expect(first.url).toBe(`${baseUrl}/pets`);
    expect(first.headers.get('authorization')).toBe('Bearer psk_test');
    expect(first.headers.get('content-type')).toBe('application/json');
    expect(first.headers.get('idempotency-key')).toMatch(/^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$/);
    expect(second.headers.get('idempotency-key')).not.toBe(first.headers.get('idempotency-key'));
  });

  it('follows Link rel="next" through every page, as the URL stands', async () => {
    const next = (cursor: string) => ({ Link: `<${baseUrl}/pets?limit=1&cursor=${cursor}>; rel="next"` });
    const { client, requests } = scripted([
      json(200, [rex], next('a')),
      json(200, [{ ...rex, id: 2 }], next('b')),
      json(200, [{ ...rex, id: 3 }]),
    ]);
    const ids: number[] = [];
    for await (const pet of client.allPets({ limit: 1, status: 'available' })) ids.push(pet.id);
    expect(ids).toEqual([1, 2, 3]);
    expect(requests.map((request) => request.url)).toEqual([
      `${baseUrl}/pets?limit=1&status=available`,
      `${baseUrl}/pets?limit=1&cursor=a`,
      `${baseUrl}/pets?limit=1&cursor=b`,
    ]);
  });

  it('never sends the key to another origin through a next link', async () => {
    const { client } = scripted([json(200, [rex], { Link: '<https://elsewhere.example/v1/pets?cursor=x>; rel="next"' })]);
    await expect(client.listPets()).rejects.toThrow('another origin');
  });

  it('reports an answer without an Error object as UnexpectedResponseError', async () => {
    const { client } = scripted(
      [new Response('<html>Bad gateway</html>', { status: 502 }), new Response('<html>Bad gateway</html>', { status: 400 })],
      { retry: { maxRetries: 1 } },
    );
    const thrown = (await client.listPets().catch((caught: unknown) => caught)) as UnexpectedResponseError;
    expect(thrown).toBeInstanceOf(UnexpectedResponseError);
    expect(thrown).toMatchObject({ status: 400, body: '<html>Bad gateway</html>' });
  });
});

describe('headers', () => {
  it('finds a relation in a Link header with several links and relation types', () => {
    expect(linkTarget('<https://a/1>; rel="prev", <https://a/3>; rel="next last"', 'next')).toBe('https://a/3');
    expect(linkTarget('<https://a/3>; rel=next', 'next')).toBe('https://a/3');
    expect(linkTarget('<https://a/p>; rel="successor-version"', 'next')).toBeUndefined();
    expect(linkTarget(null, 'next')).toBeUndefined();
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfterSeconds('120')).toBe(120);
    expect(parseRetryAfterSeconds('Thu, 01 Jan 2099 00:00:30 GMT', Date.parse('2099-01-01T00:00:00Z'))).toBe(30);
    expect(parseRetryAfterSeconds('soon')).toBeUndefined();
    expect(parseRetryAfterSeconds(null)).toBeUndefined();
  });
});

/** Lets every promise that can settle do so (no timer involved: the next turn of the event loop). */
function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
