/**
 * A short contract check against a live stage:
 *
 *   PETSTORE_API_KEY=psk_… npm run smoke -- --base-url https://api.example.com/v1 [--read-only]
 *
 * The key comes from the environment, never from the command line: npm echoes
 * its arguments into the log, and every user of the machine sees them in `ps`.
 * Nothing printed contains it.
 *
 * Authentication, listing and following Link, a create marked as a smoke test
 * (skipped with --read-only, the mode for production), the deprecated get with
 * its headers, the Error object of a 400, 404 and 401, and the rate-limit
 * headers. It sends about a dozen requests, never more than four per second,
 * prints a pass/fail table and exits 1 if any check failed. Pets cannot be
 * deleted through the API, so a created smoke-test pet stays (its name says
 * what it is).
 */
import { randomUUID } from 'node:crypto';
import { Command } from 'commander';

export interface SmokeOptions {
  baseUrl: string;
  key: string;
  readOnly: boolean;
}

export interface CheckResult {
  check: string;
  outcome: 'pass' | 'fail' | 'skip';
  detail: string;
}

/** At most this many requests per second against the stage. */
const MAX_REQUESTS_PER_SECOND = 4;
const REQUEST_TIMEOUT_MS = 15_000;
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

class CheckFailed extends Error {}

function expectThat(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailed(message);
}

/** A live stage, called no faster than MAX_REQUESTS_PER_SECOND. */
class Stage {
  private lastRequestAt = 0;
  constructor(private readonly options: SmokeOptions) {}

  async call(pathOrUrl: string, init: RequestInit & { key?: string | null } = {}): Promise<{ response: Response; body: unknown }> {
    const wait = this.lastRequestAt + 1000 / MAX_REQUESTS_PER_SECOND - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.lastRequestAt = Date.now();
    const { key = this.options.key, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null) headers.set('Authorization', `Bearer ${key}`);
    const url = pathOrUrl.startsWith('/') ? `${this.options.baseUrl}${pathOrUrl}` : pathOrUrl;
    const response = await fetch(url, { ...rest, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the checks say so.
    }
    return { response, body };
  }
}

/** The Error object of the interface, with the expected status and code. */
function expectError(response: Response, body: unknown, status: number, code: string): void {
  expectThat(response.status === status, `expected ${status}, got ${response.status}`);
  expectThat(response.headers.get('content-type')?.startsWith('application/json'), 'the Error object is not application/json');
  const error = body as Record<string, unknown>;
  expectThat(error && typeof error === 'object' && !Array.isArray(error), 'the body is not an Error object');
  expectThat(
    error.code === code && error.status === status && typeof error.message === 'string',
    `expected {code: "${code}", status: ${status}, message}, got ${JSON.stringify(body)}`,
  );
}

const nextLink = (response: Response): string | undefined => /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];

interface Check {
  check: string;
  run: () => Promise<string>;
  /** Why it is not run, if it is not. */
  skip?: string;
  /** The checks after it cannot mean anything if it fails. */
  essential?: boolean;
}

/** The checks, in order; each returns its detail or throws CheckFailed. Later checks may use what earlier ones found. */
function checks(stage: Stage, options: SmokeOptions): Check[] {
  const found: { petId?: number } = {};
  return [...successChecks(stage, options, found), ...errorChecks(stage)];
}

/** Authentication, rate-limit headers, create, list and follow Link, the deprecated get. */
function successChecks(stage: Stage, options: SmokeOptions, found: { petId?: number }): Check[] {
  return [
    {
      check: 'authentication: the key is accepted',
      essential: true,
      run: async () => {
        const { response } = await stage.call('/pets?limit=1');
        expectThat(
          response.status !== 401,
          'the key was refused (401 unauthorized): check PETSTORE_API_KEY and that it belongs to this stage',
        );
        expectThat(response.status === 200, `GET /pets answered ${response.status}`);
        return 'GET /pets → 200';
      },
    },
    {
      check: 'rate-limit headers on a success',
      run: async () => {
        const { response } = await stage.call('/pets?limit=1');
        const missing = RATE_LIMIT_HEADERS.filter((name) => !/^\d+$/.test(response.headers.get(name) ?? ''));
        expectThat(missing.length === 0, `missing or not a whole number: ${missing.join(', ')}`);
        return RATE_LIMIT_HEADERS.map((name) => `${name}: ${response.headers.get(name)}`).join(', ');
      },
    },
    {
      check: 'create a pet (marked as a smoke test)',
      skip: options.readOnly ? 'read-only mode' : undefined,
      run: async () => {
        const name = `smoke-test ${new Date().toISOString()}`;
        const { response, body } = await stage.call('/pets', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `smoke-${randomUUID()}` },
          body: JSON.stringify({ name, categoryId: 1 }),
        });
        expectThat(response.status === 201, `POST /pets answered ${response.status}: ${JSON.stringify(body)}`);
        const pet = body as { id?: unknown; name?: unknown };
        expectThat(typeof pet.id === 'number' && pet.name === name, `unexpected pet ${JSON.stringify(body)}`);
        found.petId = pet.id;
        return `pet ${pet.id} "${name}"`;
      },
    },
    {
      check: 'list pages and follow Link rel="next"',
      run: async () => {
        const first = await stage.call('/pets?limit=1');
        expectThat(first.response.status === 200 && Array.isArray(first.body), `GET /pets?limit=1 answered ${first.response.status}`);
        found.petId ??= (first.body as { id?: number }[])[0]?.id;
        const next = nextLink(first.response);
        if (!next) return 'one page only (fewer than 2 pets): no Link to follow';
        expectThat(next.startsWith(`${options.baseUrl}/pets?`), `Link points outside the base URL: ${next}`);
        const second = await stage.call(next);
        expectThat(second.response.status === 200 && Array.isArray(second.body), `following Link answered ${second.response.status}`);
        return `followed ${next}`;
      },
    },
    {
      check: 'deprecated get: Deprecation, Sunset and successor Link',
      run: async () => {
        const { response } = await stage.call(`/pets/${found.petId ?? 1}`);
        expectThat([200, 404].includes(response.status), `GET /pets/{petId} answered ${response.status}`);
        const deprecation = response.headers.get('deprecation');
        const sunset = response.headers.get('sunset');
        const link = response.headers.get('link') ?? '';
        expectThat(deprecation && /^@\d+$/.test(deprecation), `Deprecation is ${deprecation}`);
        expectThat(sunset && !Number.isNaN(Date.parse(sunset)), `Sunset is ${sunset}`);
        expectThat(link === `<${options.baseUrl}/pets>; rel="successor-version"`, `Link is ${link}`);
        return `${response.status}, Deprecation ${deprecation}, Sunset ${sunset}`;
      },
    },
  ];
}

/** The Error object of a 400, a 404 and a 401. */
function errorChecks(stage: Stage): Check[] {
  return [
    {
      check: 'Error object of a 400 (limit=0)',
      run: async () => {
        const { response, body } = await stage.call('/pets?limit=0');
        expectError(response, body, 400, 'invalid_request');
        return '400 invalid_request';
      },
    },
    {
      check: 'Error object of a 404 (no such route)',
      run: async () => {
        const { response, body } = await stage.call('/no-such-route');
        expectError(response, body, 404, 'not_found');
        return '404 not_found';
      },
    },
    {
      check: 'Error object of a 401 (no key, then a wrong key)',
      run: async () => {
        for (const key of [null, `psk_${'0'.repeat(43)}`]) {
          const { response, body } = await stage.call('/pets', { key });
          expectError(response, body, 401, 'unauthorized');
          expectThat(response.headers.get('www-authenticate') === 'Bearer', 'no WWW-Authenticate: Bearer');
        }
        return '401 unauthorized with WWW-Authenticate: Bearer';
      },
    },
  ];
}

export async function runSmoke(options: SmokeOptions): Promise<CheckResult[]> {
  const normalized = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
  const stage = new Stage(normalized);
  const results: CheckResult[] = [];
  let stopped: string | undefined;
  for (const { check, run, skip, essential } of checks(stage, normalized)) {
    if (stopped || skip) {
      results.push({ check, outcome: 'skip', detail: stopped ?? skip ?? '' });
      continue;
    }
    try {
      results.push({ check, outcome: 'pass', detail: await run() });
    } catch (error) {
      const detail = error instanceof CheckFailed ? error.message : `request failed: ${(error as Error).message}`;
      results.push({ check, outcome: 'fail', detail });
      if (essential) stopped = `not run: "${check}" failed`;
    }
  }
  return results;
}

export function renderTable(results: CheckResult[]): string {
  const width = Math.max(...results.map((result) => result.check.length));
  const lines = results.map((result) => `${result.outcome.toUpperCase().padEnd(4)}  ${result.check.padEnd(width)}  ${result.detail}`);
  const failed = results.filter((result) => result.outcome === 'fail').length;
  lines.push(
    failed === 0
      ? `all ${results.filter((r) => r.outcome === 'pass').length} checks passed`
      : `${failed} of ${results.length} checks failed`,
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const program = new Command()
    .name('smoke')
    .description('A short contract check of a deployed stage (or npm start).')
    .requiredOption('--base-url <url>', 'the stage URL, ending in /v1 (the stack output ApiUrl)')
    .option('--read-only', 'create nothing (for production)', false)
    .parse();
  const opts = program.opts<{ baseUrl: string; readOnly: boolean }>();
  const key = process.env.PETSTORE_API_KEY ?? '';
  if (key === '')
    program.error('Set PETSTORE_API_KEY to an API key of this stage (never pass a key as an argument: npm and ps show arguments).');
  if (!/^https?:\/\/[^/]+\/v1\/?$/.test(opts.baseUrl))
    program.error(`--base-url must be the stage URL ending in /v1, e.g. https://api.example.com/v1; got ${opts.baseUrl}`);
  const results = await runSmoke({ ...opts, key });
  console.log(renderTable(results));
  process.exitCode = results.some((result) => result.outcome === 'fail') ? 1 : 0;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
