import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTargetFor, runKeysCli } from '../../admin/keys-cli';
import { deploymentCheckKey } from '../../definitions/deployment-check';
import { CustomerTable, checkCustomer } from '../../functions/customers';
import { checkKeyFromSecret } from '../../functions/deployment-check/check-key';
import { freePort } from '../../local/dynamodb-local';
import { writeLocalEndpoint } from '../../local/local-endpoint';
import { startTestApi, type TestApi } from '../support/api';
import { TestClock, testDay, testEndpoint, testInstant } from '../support/dynamo';

/**
 * The key tool as an administrator uses it, against the local API: the real
 * commander program, the real local target (found through the endpoint file
 * that `npm start` writes), real HTTP calls with the keys it prints. Time moves
 * by the test clock only.
 */
const projectRoot = join(__dirname, '..', '..');
let api: TestApi;
const clock = new TestClock();
let scratch: string;
let endpointFile: string;

beforeAll(async () => {
  api = await startTestApi({ clock });
  scratch = mkdtempSync(join(tmpdir(), 'petstore-keys-'));
  endpointFile = join(scratch, 'local-endpoint.json');
  const tablePrefix = api.dependencies.tableNames.apiKeys.replace(/-apiKeys$/, '');
  writeLocalEndpoint({ dynamoEndpoint: testEndpoint(), tablePrefix, usagePlansDir: api.usagePlans.dir }, endpointFile);
});
afterAll(async () => {
  await api.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function keys(args: string[], options: { endpointFile?: string } = {}): Promise<Run> {
  const run: Run = { code: -1, stdout: '', stderr: '' };
  run.code = await runKeysCli(args, {
    clock: clock.read,
    out: (text) => {
      run.stdout += text;
    },
    err: (text) => {
      run.stderr += text;
    },
    openTarget: openTargetFor({ localEndpointFile: options.endpointFile ?? endpointFile }),
  });
  return run;
}

async function succeeds(args: string[]): Promise<string> {
  const run = await keys(args);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return run.stdout;
}

/** A failure a person can act on: exit code 1, one line on stderr, no stack trace, nothing on stdout. */
function expectOneLineError(run: Run, message: RegExp): void {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

const call = (secret: string) => api.call('/pets', { key: secret });
const limitOf = (response: Response) => Number(response.headers.get('x-ratelimit-limit'));

interface IssuedJson {
  keyId: string;
  displayPrefix: string;
  secret: string;
  plan: string;
  status: string;
}

it('issues, re-plans, rotates and revokes a key, each taking effect on the API as documented, and reports its usage', async () => {
  clock.set(testInstant(0, '12:00:00'));

  // issue: the secret is printed once, with its id and display prefix.
  const issuedText = await succeeds(['issue', '--plan', 'pro', '--owner', 'Acme Ltd']);
  const secret = /^\s+(psk_\S+)$/m.exec(issuedText)![1]!;
  const keyId = /Key id\s+(key_\w+)/.exec(issuedText)![1]!;
  expect(issuedText.split(secret)).toHaveLength(2);
  expect(issuedText).toContain(`Display prefix  ${secret.slice(0, 12)}…`);
  expect(issuedText).toContain('Pro (300/min, 10,000/day)');

  const first = await call(secret);
  expect(first.status).toBe(200);
  expect(limitOf(first)).toBe(300);

  // set-plan: the next request gets the new limits, though the authorizer's answer is still cached.
  const moved = await succeeds(['set-plan', keyId, 'free']);
  expect(moved).toContain(
    `${keyId} in local (npm start) moved from Pro (300/min, 10,000/day) to Free (60/min, 1,000/day): the new limits apply from its next request on.`,
  );
  clock.advance(1_000);
  const afterMove = await call(secret);
  expect(afterMove.status).toBe(200);
  expect(limitOf(afterMove)).toBe(60);

  // rotate: both keys work during the grace, only the successor after it.
  const rotated = JSON.parse(await succeeds(['rotate', keyId, '--grace', '24h', '--json'])) as IssuedJson & {
    replaces: { keyId: string; expiresAt: string };
  };
  expect(rotated).toMatchObject({
    plan: 'free',
    status: 'active',
    replaces: { keyId, expiresAt: new Date(clock.now + 86_400_000).toISOString() },
  });
  const successor = rotated.secret;
  expect(successor).not.toBe(secret);
  expect((await call(secret)).status).toBe(200);
  const successorCall = await call(successor);
  expect(successorCall.status).toBe(200);
  expect(limitOf(successorCall)).toBe(60);
  // show: both keys show the same usage, the customer's: the requests of both secrets, on one set of counters.
  // Four were answered; the function instance, which saw the customer's fourth request within 10 s, took one
  // more as spare for its next (docs/architecture.md): usage counts what the limiter granted, held spare included.
  const todayOf = async (id: string) => /^Today\s+(.+)$/m.exec(await succeeds(['show', id]))?.[1];
  expect(await todayOf(keyId)).toBe(`5 of 1,000 requests (UTC day ${testDay(0)})`);
  expect(await todayOf(rotated.keyId)).toBe(`5 of 1,000 requests (UTC day ${testDay(0)})`);
  clock.advance(86_400_000 + 1_000);
  expect((await call(secret)).status).toBe(401);
  expect((await call(successor)).status).toBe(200);

  // revoke: the very next request is refused, though the authorizer's answer is still cached.
  const revoked = await succeeds(['revoke', rotated.keyId]);
  expect(revoked).toContain(
    `Revoked ${rotated.keyId} (${rotated.displayPrefix}…, Free, owner Acme Ltd) in local (npm start): its next request is refused with 401.`,
  );
  clock.advance(1_000);
  const refused = await call(successor);
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toBe('Bearer');

  // usage: the requests served, per UTC day (refused ones count toward nothing), to either key of the rotation.
  const usage = await succeeds(['usage', keyId, '--days', '2']);
  expect(usage).toMatch(new RegExp(String.raw`^${testDay(0)}\s+5\s+${testDay(0)}T12:00:01Z$`, 'm'));
  expect(usage).toMatch(new RegExp(String.raw`^${testDay(1)}\s+1\s+${testDay(1)}T12:00:02Z$`, 'm'));
  expect(usage).toContain('Total: 6 requests in 2 days.');
  const successorUsage = JSON.parse(await succeeds(['usage', rotated.keyId, '--days', '2', '--json'])) as {
    days: { day: string; requests: number }[];
    total: number;
  };
  expect(successorUsage.days.map(({ day, requests }) => [day, requests])).toEqual([
    [testDay(0), 5],
    [testDay(1), 1],
  ]);

  // The listing tells the two apart, and shows they are secrets of one customer (named by its first key's id).
  const listed = JSON.parse(await succeeds(['list', '--json'])) as { keyId: string; customerId: string; status: string }[];
  expect(listed.filter((key) => [keyId, rotated.keyId].includes(key.keyId)).map((key) => [key.keyId, key.customerId, key.status])).toEqual([
    [keyId, keyId, 'expired'],
    [rotated.keyId, keyId, 'revoked'],
  ]);
  const rows = (await succeeds(['list'])).split('\n');
  for (const id of [keyId, rotated.keyId])
    expect(rows.find((row) => row.startsWith(`${id} `))).toMatch(new RegExp(`^${id}\\s+${keyId}\\s`));
  expect(await succeeds(['show', rotated.keyId])).toMatch(new RegExp(`^Customer\\s+${keyId}$`, 'm'));
});

describe('the customer is the unit of a plan: every secret of it has one plan, whichever is named', () => {
  /** The plan as `show` and `list` print it for a key, and the limit its next answer carries. */
  const planOf = async (keyId: string) => /^Plan\s+(.+)$/m.exec(await succeeds(['show', keyId]))?.[1];
  const listedPlan = async (keyId: string) =>
    (JSON.parse(await succeeds(['list', '--json'])) as { keyId: string; plan: string }[]).find((key) => key.keyId === keyId)?.plan;
  const answerLimit = async (secret: string) => {
    clock.advance(1_000);
    const response = await call(secret);
    return { status: response.status, limit: limitOf(response) };
  };

  /** An Enterprise customer of 1,000/min and 20,000/day, its key rotated with a grace of 30 minutes: both secrets. */
  const rotatedEnterpriseCustomer = async (owner: string) => {
    const old = JSON.parse(
      await succeeds(['issue', '--plan', 'enterprise', '--owner', owner, '--per-minute', '1000', '--per-day', '20000', '--json']),
    ) as IssuedJson;
    const rotated = JSON.parse(await succeeds(['rotate', old.keyId, '--grace', '30m', '--json'])) as IssuedJson;
    return { old, rotated };
  };

  it('set-plan on either secret of a rotation, in both directions, during the grace: show, list and both secrets’ answers agree', async () => {
    clock.set(testInstant(4, '10:00:00'));
    const { old, rotated } = await rotatedEnterpriseCustomer('Wayne');
    const both = [
      { keyId: old.keyId, secret: old.secret },
      { keyId: rotated.keyId, secret: rotated.secret },
    ];
    const steps: { via: string; plan: string[]; shown: string; limit: number }[] = [
      { via: old.keyId, plan: ['free'], shown: 'Free (60/min, 1,000/day)', limit: 60 },
      { via: rotated.keyId, plan: ['pro'], shown: 'Pro (300/min, 10,000/day)', limit: 300 },
      {
        via: old.keyId,
        plan: ['enterprise', '--per-minute', '1000', '--per-day', '20000'],
        shown: 'Enterprise (1,000/min, 20,000/day)',
        limit: 1_000,
      },
    ];
    for (const step of steps) {
      await succeeds(['set-plan', step.via, ...step.plan]);
      for (const key of both) {
        expect(await planOf(key.keyId)).toBe(step.shown);
        expect(await listedPlan(key.keyId)).toBe(step.plan[0]);
        expect(await answerLimit(key.secret)).toEqual({ status: 200, limit: step.limit });
      }
    }
  });

  it('after the grace, the expired secret cannot change the plan (nothing changes); the working one can, for the customer', async () => {
    clock.set(testInstant(5, '10:00:00'));
    const { old, rotated } = await rotatedEnterpriseCustomer('Stark');
    clock.advance(30 * 60_000);
    expectOneLineError(
      await keys(['set-plan', old.keyId, 'free']),
      new RegExp(
        `${old.keyId} is expired: change the plan of customer ${old.keyId} through its working key \\(\`petstore-keys list\` shows the keys of each customer\\)\\.$`,
        'm',
      ),
    );
    expect(await planOf(rotated.keyId)).toBe('Enterprise (1,000/min, 20,000/day)');
    expect(await answerLimit(rotated.secret)).toEqual({ status: 200, limit: 1_000 });

    await succeeds(['set-plan', rotated.keyId, 'pro']);
    expect(await planOf(old.keyId)).toBe('Pro (300/min, 10,000/day)');
    expect(await answerLimit(rotated.secret)).toEqual({ status: 200, limit: 300 });
    expect((await answerLimit(old.secret)).status).toBe(401);

    // A revoked secret cannot change it either.
    await succeeds(['revoke', rotated.keyId]);
    // Then the customer has no working key: the tool says what is left to do.
    expectOneLineError(
      await keys(['set-plan', rotated.keyId, 'business']),
      new RegExp(
        `^error: ${rotated.keyId} is revoked, and customer ${old.keyId} has no working key left: there is no plan to change\\. To serve Stark again, issue a new key \\(\`petstore-keys issue --plan <plan> --owner <name>\`\\), which starts a new customer\\.$`,
        'm',
      ),
    );
    expect(await planOf(rotated.keyId)).toBe('Pro (300/min, 10,000/day)');
  });
});

it('never shows a secret, its hash or the metering key in listings or show; only the display prefix', async () => {
  clock.set(testInstant(2, '09:00:00'));
  const issued = JSON.parse(await succeeds(['issue', '--plan', 'business', '--owner', 'Globex', '--json'])) as IssuedJson;
  expect((await call(issued.secret)).status).toBe(200);
  const record = (await new CustomerTable(api.dependencies.db, api.dependencies.tableNames).findById(issued.keyId))!;

  const outputs = [
    await succeeds(['list']),
    await succeeds(['list', '--json']),
    await succeeds(['show', issued.keyId]),
    await succeeds(['show', issued.keyId, '--json']),
    await succeeds(['usage', issued.keyId]),
  ];
  for (const text of outputs) {
    for (const hidden of [issued.secret, issued.secret.slice(12), record.keyHash, record.meteringKey]) expect(text).not.toContain(hidden);
  }
  expect(outputs[0]).toContain(`${issued.displayPrefix}…`);

  const shown = outputs[2]!;
  expect(shown).toMatch(/^Plan\s+Business \(1,000\/min, 100,000\/day\)$/m);
  expect(shown).toMatch(/^Owner\s+Globex$/m);
  expect(shown).toMatch(/^Status\s+active$/m);
  expect(shown).toMatch(new RegExp(String.raw`^Created\s+${testDay(2)}T09:00:00Z$`, 'm'));
  expect(shown).toMatch(new RegExp(String.raw`^Last used\s+${testDay(2)}T09:00:00Z$`, 'm'));
  expect(shown).toMatch(new RegExp(String.raw`^Today\s+1 of 100,000 requests \(UTC day ${testDay(2)}\)$`, 'm'));
});

it('lists keys as a table, filtered by plan and status', async () => {
  clock.set(testInstant(3, '09:00:00'));
  const free = JSON.parse(await succeeds(['issue', '--plan', 'free', '--owner', 'Initech', '--json'])) as IssuedJson;
  const enterprise = JSON.parse(
    await succeeds(['issue', '--plan', 'enterprise', '--owner', 'Umbrella', '--per-minute', '5000', '--per-day', '2000000', '--json']),
  ) as IssuedJson;
  await succeeds(['revoke', free.keyId]);

  const table = await succeeds(['list', '--plan', 'enterprise']);
  const [header, ...rows] = table.trimEnd().split('\n');
  expect(header).toMatch(/^ID\s+CUSTOMER\s+PREFIX\s+PLAN\s+LIMITS\s+OWNER\s+STATUS\s+CREATED\s+EXPIRES$/);
  expect(rows.every((row) => /\benterprise\b/.test(row))).toBe(true);
  expect(rows.find((row) => row.startsWith(enterprise.keyId))).toMatch(
    new RegExp(String.raw`enterprise\s+5,000\/min, 2,000,000\/day\s+Umbrella\s+active\s+${testDay(3)}T09:00:00Z\s+-$`),
  );

  const revoked = JSON.parse(await succeeds(['list', '--status', 'revoked', '--json'])) as { keyId: string; status: string }[];
  expect(revoked.map((key) => key.keyId)).toContain(free.keyId);
  expect(revoked.every((key) => key.status === 'revoked')).toBe(true);
});

it('shows a key the rate limiter banned as suspended until the ban ends, in show and in list --status suspended', async () => {
  clock.set(testInstant(3, '10:00:30'));
  const banned = JSON.parse(
    await succeeds(['issue', '--plan', 'enterprise', '--owner', 'Hooli', '--per-minute', '1', '--per-day', '10', '--json']),
  ) as IssuedJson;
  expect((await call(banned.secret)).status).toBe(200);
  // One refusal reaches a per-minute limit of 1: the ban rule suspends the key for 15 minutes.
  // A second apart: its usage plan's throttle (a bucket of 2, 1 a second) lets each reach the API.
  clock.advance(1_000);
  expect((await call(banned.secret)).status).toBe(429);
  clock.advance(1_000);
  const refused = (await (await call(banned.secret)).json()) as { code: string };
  expect(refused.code).toBe('key_suspended');

  const shown = await succeeds(['show', banned.keyId]);
  expect(shown).toMatch(
    new RegExp(String.raw`^Status\s+suspended until ${testDay(3)}T10:1\d:\d\dZ \(rate-limit ban: 429 key_suspended\)$`, 'm'),
  );
  const suspended = JSON.parse(await succeeds(['list', '--status', 'suspended', '--json'])) as { keyId: string; suspendedUntil?: string }[];
  expect(suspended.map((key) => key.keyId)).toEqual([banned.keyId]);
  expect(Date.parse(suspended[0]?.suspendedUntil ?? '')).toBeGreaterThan(clock.read());

  // The ban ends: the key is active again, in the tool as on the API.
  clock.set(testInstant(3, '10:20:00'));
  expect(await succeeds(['show', banned.keyId])).toMatch(/^Status\s+active$/m);
  expect(JSON.parse(await succeeds(['list', '--status', 'suspended', '--json']))).toEqual([]);
});

it('moves an enterprise key to other limits, and refuses limits on the other plans', async () => {
  clock.set(testInstant(4, '09:00:00'));
  const issued = JSON.parse(
    await succeeds(['issue', '--plan', 'enterprise', '--owner', 'Hooli', '--per-minute', '2', '--per-day', '100', '--json']),
  ) as IssuedJson;
  expect(limitOf(await call(issued.secret))).toBe(2);
  expect(await succeeds(['set-plan', issued.keyId, 'enterprise', '--per-minute', '3', '--per-day', '100'])).toContain(
    'from Enterprise (2/min, 100/day) to Enterprise (3/min, 100/day)',
  );
  clock.advance(1_000);
  expect(limitOf(await call(issued.secret))).toBe(3);
  expect(await succeeds(['set-plan', issued.keyId, 'enterprise', '--per-minute', '3', '--per-day', '100'])).toContain('nothing changed');
  expectOneLineError(
    await keys(['set-plan', issued.keyId, 'pro', '--per-minute', '3']),
    /--per-minute and --per-day are for enterprise keys only/,
  );
});

describe('a Free key changed while the gateway still caches its authorizer answer: the next request already knows', () => {
  // Each request below repeats the Authorization header of a request a moment
  // before, so the local gateway answers from its authorizer cache (300 s),
  // as API Gateway would: only the functions can see the change.
  const issueFree = async () => JSON.parse(await succeeds(['issue', '--plan', 'free', '--owner', 'Initech', '--json'])) as IssuedJson;

  it('revoke: the next request gets 401 with WWW-Authenticate: Bearer, and is not counted', async () => {
    clock.set(testInstant(5, '10:00:00'));
    const key = await issueFree();
    expect((await call(key.secret)).status).toBe(200);
    await succeeds(['revoke', key.keyId]);
    clock.advance(1_000);
    const refused = await call(key.secret);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    expect(await refused.json()).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(await succeeds(['usage', key.keyId, '--days', '1'])).toContain('Total: 1 request in 1 day.');
  });

  it('rotate --grace 0: the next request of the old key gets 401; the successor works', async () => {
    clock.set(testInstant(5, '11:00:00'));
    const key = await issueFree();
    expect((await call(key.secret)).status).toBe(200);
    const rotated = await succeeds(['rotate', key.keyId, '--grace', '0']);
    expect(rotated).toContain(`${key.keyId} stopped working now (no grace): its next request is refused with 401.`);
    const successor = /^\s+(psk_\S+)$/m.exec(rotated)![1]!;
    clock.advance(1);
    expect((await call(key.secret)).status).toBe(401);
    expect((await call(successor)).status).toBe(200);
  });

  it('set-plan pro: the next response carries X-RateLimit-Limit: 300', async () => {
    clock.set(testInstant(5, '12:00:00'));
    const key = await issueFree();
    const before = await call(key.secret);
    expect(limitOf(before)).toBe(60);
    await succeeds(['set-plan', key.keyId, 'pro']);
    const after = await call(key.secret);
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-limit')).toBe('300');
    // The request before the change counts in the same minute: 300 - 2.
    expect(after.headers.get('x-ratelimit-remaining')).toBe('298');
  });
});

describe('errors a person can act on: one line on stderr, exit code 1, nothing changed', () => {
  it('an unknown key id', async () => {
    const unknown = 'key_0000000000000000';
    for (const args of [
      ['show', unknown],
      ['rotate', unknown],
      ['revoke', unknown],
      ['usage', unknown],
      ['set-plan', unknown, 'pro'],
    ]) {
      expectOneLineError(
        await keys(args),
        /^error: No key "key_0000000000000000" in local \(npm start\): `petstore-keys list` shows the key ids/,
      );
    }
  });

  it('a bad plan, a missing option, a bad number or duration', async () => {
    expectOneLineError(
      await keys(['issue', '--plan', 'gold', '--owner', 'x']),
      /argument 'gold' is invalid\. Allowed choices are free, pro, business, enterprise/,
    );
    expectOneLineError(await keys(['issue', '--plan', 'pro']), /required option '--owner <name>' not specified/);
    expectOneLineError(
      await keys(['issue', '--plan', 'enterprise', '--owner', 'x']),
      /An enterprise key needs its own limits: pass --per-minute N and --per-day N/,
    );
    expectOneLineError(
      await keys(['issue', '--plan', 'enterprise', '--owner', 'x', '--per-minute', '-1', '--per-day', '5']),
      /--per-minute/,
    );
    expectOneLineError(
      await keys(['set-plan', 'key_0000000000000000', 'platinum']),
      /value 'platinum' is invalid for argument 'plan'\. Allowed choices are free, pro, business, enterprise/,
    );
    expectOneLineError(
      await keys(['rotate', 'key_0000000000000000', '--grace', 'tomorrow']),
      /--grace must be a duration such as 90s, 30m, 24h or 7d/,
    );
    expectOneLineError(
      await keys(['usage', 'key_0000000000000000', '--days', '36']),
      /argument '36' is invalid\. must be a whole number from 1 to 35 \(counters are kept 35 days\)\.$/m,
    );
    // 13 digits: past the largest limit, which the refusal names.
    expectOneLineError(
      await keys(['issue', '--plan', 'enterprise', '--owner', 'x', '--per-minute', '1000000000000', '--per-day', '1000000000000']),
      /option '--per-minute <n>' argument '1000000000000' is invalid\. must be a whole number from 1 to 999,999,999,999\.$/m,
    );
    expectOneLineError(await keys(['list', '--stage', 'dev']), /argument 'dev' is invalid\. Allowed choices are staging, production/);
    expectOneLineError(await keys(['list', '--region', 'eu-west-1']), /--region chooses where a deployed stage is: use it with --stage/);
  });

  it("an owner over 200 characters, counted in code points as a pet's name: refused in the rule's words; 200 emoji are fine", async () => {
    const before = await succeeds(['list']);
    expectOneLineError(
      await keys(['issue', '--plan', 'pro', '--owner', '🐶'.repeat(201)]),
      /^error: --owner names the customer and must be at most 200 characters\.$/m,
    );
    expect(await succeeds(['list'])).toBe(before);
    const issued = JSON.parse(await succeeds(['issue', '--plan', 'pro', '--owner', '🐶'.repeat(200), '--json'])) as IssuedJson;
    expect(await succeeds(['show', issued.keyId])).toMatch(new RegExp(`^Owner\\s+${'🐶'.repeat(200)}$`, 'mu'));
  });

  it('a key that cannot be rotated or re-planned any more', async () => {
    const issued = JSON.parse(await succeeds(['issue', '--plan', 'pro', '--owner', 'Soylent', '--json'])) as IssuedJson;
    await succeeds(['rotate', issued.keyId, '--grace', '1h']);
    expectOneLineError(await keys(['rotate', issued.keyId]), new RegExp(`${issued.keyId} was rotated already and stops working at`));
    await succeeds(['revoke', issued.keyId]);
    expectOneLineError(await keys(['rotate', issued.keyId]), new RegExp(`${issued.keyId} is revoked: only an active key can be rotated`));
    expectOneLineError(
      await keys(['set-plan', issued.keyId, 'free']),
      new RegExp(`${issued.keyId} is revoked: change the plan of customer ${issued.keyId} through its working key`),
    );
    expect(await succeeds(['revoke', issued.keyId])).toContain('was revoked already; nothing changed');
  });

  it('npm start is not running: no endpoint file, or one left behind by a killed npm start', async () => {
    expectOneLineError(
      await keys(['list'], { endpointFile: join(scratch, 'missing.json') }),
      /^error: npm start is not running: start it in another terminal/,
    );
    const stale = join(scratch, 'stale-endpoint.json');
    writeLocalEndpoint({ dynamoEndpoint: `http://127.0.0.1:${await freePort()}`, tablePrefix: 'petstore-local' }, stale);
    expectOneLineError(await keys(['show', 'key_0000000000000000'], { endpointFile: stale }), /^error: npm start is not running/);
  });
});

describe('what the key tool leaves alone: secrets given where an id belongs, and the deployment check key', () => {
  it('a secret where a key id belongs: every command refuses it, and no output shows more of it than its display prefix', async () => {
    const issued = JSON.parse(await succeeds(['issue', '--plan', 'pro', '--owner', 'Vandelay', '--json'])) as IssuedJson;
    const { secret, displayPrefix } = issued;
    /** Runs of 8 characters of the secret that its display prefix (psk_ and 8 characters) does not show. */
    const hidden = Array.from({ length: secret.length - displayPrefix.length }, (_, i) => secret.slice(i + 5, i + 13));
    const commands = (id: string) => [
      ['show', id],
      ['show', id, '--json'],
      ['usage', id],
      ['usage', id, '--days', '2', '--json'],
      ['rotate', id],
      ['rotate', id, '--grace', '0', '--json'],
      ['revoke', id],
      ['set-plan', id, 'business'],
      ['set-plan', id, 'enterprise', '--per-minute', '10', '--per-day', '100'],
    ];
    for (const [pasted, shown] of [
      [secret, `"${displayPrefix}…" in local \\(npm start\\): that is a secret, and commands take a key id`],
      [` ${secret}`, `" psk_${secret.slice(4, 7)}…"`],
      [`Bearer ${secret}`, '"Bearer p…"'],
      [secret.slice(4), `"${secret.slice(4, 12)}…"`],
      // Read as an option (a fragment of a secret may start with '-'): commander's own refusal, cut the same way.
      [`-${secret.slice(5)}`, ''],
    ] as const) {
      for (const args of commands(pasted)) {
        const run = await keys(args);
        const refusal = pasted.startsWith('-') ? `^error: unknown option '${pasted.slice(0, 8)}…'` : `^error: No key ${shown}`;
        expectOneLineError(run, new RegExp(refusal));
        for (const run8 of hidden) expect(run.stdout + run.stderr).not.toContain(run8);
      }
    }
    // Nothing changed: the key works on its plan.
    const answer = await call(secret);
    expect([answer.status, limitOf(answer)]).toEqual([200, 300]);
  });

  it("the deployment check's own key: list leaves it out; show, usage, rotate, revoke and set-plan refuse it, changing nothing", async () => {
    const table = new CustomerTable(api.dependencies.db, api.dependencies.tableNames);
    const check = checkCustomer(checkKeyFromSecret('C'.repeat(43)), 'checkmeteringkey0123456789', clock.now);
    const record = await table.ensureCheckCustomer(check, clock.now);
    expect((JSON.parse(await succeeds(['list', '--json'])) as { keyId: string }[]).map((key) => key.keyId)).not.toContain(record.keyId);
    expect(await succeeds(['list'])).not.toContain(deploymentCheckKey.keyIdPrefix);
    for (const args of [
      ['show', record.keyId],
      ['usage', record.keyId],
      ['rotate', record.keyId],
      ['revoke', record.keyId],
      ['set-plan', record.keyId, 'free'],
    ]) {
      expectOneLineError(
        await keys(args),
        new RegExp(
          `^error: ${record.keyId} is the pre-traffic deployment check's own key, not a customer's: the stack manages it and the check re-creates it if it stops working\\. Only to retire the key of a replaced secret: \`petstore-keys revoke ${record.keyId} --retire-check-key\`\\.$`,
          'm',
        ),
      );
    }
    expect(await table.findById(record.keyId)).toEqual(record);
    // The key of a replaced secret can be retired, by saying so.
    expect(await succeeds(['revoke', record.keyId, '--retire-check-key'])).toContain(`Revoked ${record.keyId}`);
    expect((await table.findById(record.keyId))!.status).toBe('revoked');
  });
});

describe('--help', () => {
  const expectedOptions: Record<string, string[]> = {
    issue: ['--plan <plan>', '--owner <name>', '--per-minute <n>', '--per-day <n>', '--json'],
    list: ['--plan <plan>', '--status <status>', '--json'],
    show: ['--json'],
    rotate: ['--grace <duration>', '--json'],
    revoke: ['--retire-check-key'],
    'set-plan': ['--per-minute <n>', '--per-day <n>'],
    usage: ['--days <n>', '--json'],
  };
  const expectedArguments: Record<string, string[]> = {
    show: ['id'],
    rotate: ['id'],
    revoke: ['id'],
    'set-plan': ['id', 'plan'],
    usage: ['id'],
  };

  it('lists every command', async () => {
    const help = await succeeds(['--help']);
    for (const command of Object.keys(expectedOptions)) expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it.each(Object.keys(expectedOptions))(
    'of %s lists its arguments, its options and the target options, and nothing else',
    async (command) => {
      const help = await succeeds([command, '--help']);
      const options = help.slice(help.indexOf('Options:'));
      const listed = [...options.matchAll(/^ {2}(?:-\w, )?(--[\w-]+(?: <[^>]+>)?)/gm)].map((match) => match[1]);
      expect(listed.sort()).toEqual([...expectedOptions[command]!, '--stage <stage>', '--region <region>', '--help'].sort());
      for (const argument of expectedArguments[command] ?? []) expect(help).toMatch(new RegExp(`^  ${argument} `, 'm'));
    },
  );

  it('states the choices and defaults', async () => {
    // Help wraps to the terminal's width: compare with the line breaks folded.
    const help = async (command: string) => (await succeeds([command, '--help'])).replace(/\s+/g, ' ');
    expect(await help('issue')).toContain('the plan of the key (choices: "free", "pro", "business", "enterprise")');
    expect(await help('list')).toContain('(choices: "active", "expired", "revoked", "suspended")');
    expect(await help('rotate')).toContain('(default: "24h")');
    expect(await help('usage')).toContain('(default: 7)');
    expect(await help('revoke')).toContain('its next request is refused');
    expect(await help('show')).toContain('(choices: "staging", "production")');
  });

  it('works as `npx petstore-keys` from the project root, and fails as one line', () => {
    const help = spawnSync('npx', ['--offline', 'petstore-keys', '--help'], { cwd: projectRoot, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: petstore-keys [options] [command]');
    const bad = spawnSync('node', [join(projectRoot, 'admin', 'petstore-keys.js'), 'issue', '--plan', 'gold', '--owner', 'x'], {
      encoding: 'utf8',
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe(
      "error: option '--plan <plan>' argument 'gold' is invalid. Allowed choices are free, pro, business, enterprise.\n",
    );
  });
});
