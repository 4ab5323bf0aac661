import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { AdminError, describeError } from '../../admin/errors';
import { effectiveStatus, parseGrace, planChoice, rotateKey, validOwner, viewOf } from '../../admin/key-admin';
import { type KeyAdminTarget, noMetering } from '../../admin/targets/target';
import { ApiKeyChangedError, type ApiKeyRecord, generateApiKey, isUsable, type StoredKeyState } from '../../functions/customers';
import { DependencyUnavailableError } from '../../functions/domain/errors';
import { newPetSchema } from '../../functions/domain/pet';
import { readLocalEndpoint, removeLocalEndpoint, writeLocalEndpoint } from '../../local/local-endpoint';

/** The plain rules of key administration (admin/key-admin.ts) and its error messages. */
describe('plan choice', () => {
  it('takes the fixed plans as they are, and refuses custom limits on them', () => {
    expect(planChoice('pro')).toEqual({ plan: 'pro' });
    expect(() => planChoice('free', { perMinute: 100 })).toThrow(
      '--per-minute and --per-day are for enterprise keys only; the Free plan allows 60/min, 1,000/day.',
    );
  });

  it('requires both limits for enterprise, with at least a minute’s worth per day', () => {
    expect(planChoice('enterprise', { perMinute: 5_000, perDay: 1_000_000 })).toEqual({
      plan: 'enterprise',
      customLimits: { perMinute: 5_000, perDay: 1_000_000 },
    });
    expect(() => planChoice('enterprise', { perMinute: 5_000 })).toThrow(AdminError);
    expect(() => planChoice('enterprise')).toThrow('An enterprise key needs its own limits: pass --per-minute N and --per-day N.');
    expect(() => planChoice('enterprise', { perMinute: 100, perDay: 99 })).toThrow('--per-day (99) must be at least --per-minute (100).');
  });
});

describe('rotation grace', () => {
  it('reads seconds, minutes, hours and days', () => {
    expect(parseGrace('90s')).toBe(90_000);
    expect(parseGrace('30m')).toBe(1_800_000);
    expect(parseGrace('24h')).toBe(86_400_000);
    expect(parseGrace('7d')).toBe(604_800_000);
    expect(parseGrace('0')).toBe(0);
    expect(parseGrace('30d')).toBe(30 * 86_400_000);
  });

  it('refuses what it cannot read, or a grace over 30 days', () => {
    for (const bad of ['24', '1.5h', '-1h', 'tomorrow', '', '1w']) expect(() => parseGrace(bad)).toThrow(/--grace must be a duration/);
    expect(() => parseGrace('31d')).toThrow('--grace can be at most 30d');
  });
});

describe('owner', () => {
  it('is trimmed, 1 to 200 characters, without control characters', () => {
    expect(validOwner('  Acme Ltd ')).toBe('Acme Ltd');
    for (const bad of [
      '',
      '   ',
      'a'.repeat(201),
      'Acme\nLtd',
      'Acme\u0000',
      '\u200b\u200b',
      '\ufeff',
      '\u200d',
      'abc\u202Eexe.txt',
      '\uffff',
    ])
      expect(() => validOwner(bad)).toThrow(/^--owner names the customer and must /);
  });

  it("counts characters as a pet's name does, in code points, and refuses in the shared rule's words", () => {
    // An emoji is one character (one code point) but two UTF-16 units: 200 of them are 400 units.
    expect(validOwner('🐶'.repeat(200))).toBe('🐶'.repeat(200));
    expect(() => validOwner('🐶'.repeat(201))).toThrow(new Error('--owner names the customer and must be at most 200 characters.'));
    expect(() => validOwner('\u200b')).toThrow(
      new Error(
        '--owner names the customer and must contain at least one visible character (a letter, mark, number, punctuation or symbol).',
      ),
    );
    // The same words as a pet's name gets for the same fault.
    expect(newPetSchema.safeParse({ name: '🐶'.repeat(101), categoryId: 1 }).error?.issues[0]?.message).toBe(
      'must be at most 100 characters',
    );
  });
});

describe('views of keys', () => {
  it('show the status the authorizer acts on: "active" exactly when the key is usable', () => {
    const { record } = generateApiKey({ plan: 'pro', owner: 'x', now: 0 });
    fc.assert(
      fc.property(
        fc.constantFrom<StoredKeyState>('active', 'revoked'),
        fc.option(fc.integer({ min: 0, max: 2_000_000 })),
        fc.integer({ min: 0, max: 2_000_000 }),
        (status, expiresAtMs, now) => {
          const candidate = { ...record, status, ...(expiresAtMs === null ? {} : { expiresAt: new Date(expiresAtMs).toISOString() }) };
          expect(effectiveStatus(candidate, now) === 'active').toBe(isUsable(candidate, now));
          if (status !== 'active') expect(effectiveStatus(candidate, now)).toBe(status);
        },
      ),
    );
  });

  it('carry the display prefix, never the secret, its hash or the metering key', () => {
    const { secret, record } = generateApiKey({ plan: 'enterprise', owner: 'x', customLimits: { perMinute: 10, perDay: 100 }, now: 0 });
    const view = viewOf(record, 0);
    expect(Object.keys(view).sort()).toEqual([
      'createdAt',
      'customerId',
      'displayPrefix',
      'keyId',
      'limits',
      'owner',
      'plan',
      'status',
      'updatedAt',
    ]);
    const text = JSON.stringify(view);
    for (const hidden of [secret, secret.slice(12), record.keyHash, record.meteringKey]) expect(text).not.toContain(hidden);
    expect(view.limits).toEqual({ perMinute: 10, perDay: 100 });
  });
});

describe('error messages', () => {
  it('are one line, with what to do, for the failures an administrator meets', () => {
    const cases: [unknown, RegExp][] = [
      [new AdminError('first line\n  second line'), /^first line second line$/],
      [
        Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }),
        /^No usable AWS credentials: set AWS_PROFILE/,
      ],
      [
        Object.assign(new Error('The security token included in the request is expired'), { name: 'ExpiredTokenException' }),
        /^Your AWS credentials have expired/,
      ],
      [
        Object.assign(new Error('User: x is not authorized to perform: apigateway:POST'), { name: 'AccessDeniedException' }),
        /^AWS refused the request with your credentials \(AccessDeniedException\): User: x is not authorized/,
      ],
      [new Error('Region is missing'), /^No AWS region: pass --region/],
      [new ApiKeyChangedError('key_1'), /^key_1 was changed by someone else while this command ran; nothing was written/],
      [
        new DependencyUnavailableError(Object.assign(new Error('connect ECONNREFUSED'), { name: 'Error' })),
        /^DynamoDB did not answer \(Error: connect ECONNREFUSED\)\. Check the connection/,
      ],
      [new TypeError('x is not a function\n    at y (z.ts:1:1)'), /^Unexpected failure \(TypeError\): x is not a function at y/],
      ['a string', /^Unexpected failure: a string$/],
    ];
    for (const [error, expected] of cases) {
      const message = describeError(error);
      expect(message).toMatch(expected);
      expect(message).not.toContain('\n');
    }
  });
});

describe('the endpoint file of npm start', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-endpoint-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is written, read back, and removed by the npm start that wrote it only', () => {
    const file = join(dir, '.local', 'local-endpoint.json');
    const mine = { dynamoEndpoint: 'http://127.0.0.1:45678', tablePrefix: 'petstore-local' };
    writeLocalEndpoint(mine, file);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(mine);
    expect(readLocalEndpoint(file)).toEqual(mine);
    removeLocalEndpoint({ ...mine, dynamoEndpoint: 'http://127.0.0.1:1' }, file);
    expect(readLocalEndpoint(file)).toEqual(mine);
    removeLocalEndpoint(mine, file);
    expect(readLocalEndpoint(file)).toBeUndefined();
  });

  it('reads as absent when missing or malformed', () => {
    expect(readLocalEndpoint(join(dir, 'none.json'))).toBeUndefined();
    writeFileSync(join(dir, 'bad.json'), '{"dynamoEndpoint": 5');
    expect(readLocalEndpoint(join(dir, 'bad.json'))).toBeUndefined();
    writeFileSync(join(dir, 'partial.json'), '{"dynamoEndpoint": "http://127.0.0.1:1"}');
    expect(readLocalEndpoint(join(dir, 'partial.json'))).toBeUndefined();
  });
});

describe('rotation', () => {
  /** Just enough of a target for rotateKey: keys in memory, nothing metered. */
  function memoryTarget() {
    const byHash = new Map<string, ApiKeyRecord>();
    const keys = {
      findById: async (keyId: string) => [...byHash.values()].find((record) => record.keyId === keyId),
      findByHash: async (keyHash: string) => byHash.get(keyHash),
      insertSuccessor: async (successor: ApiKeyRecord, predecessor: ApiKeyRecord, expiresAt: string) => {
        byHash.set(successor.keyHash, successor);
        byHash.set(predecessor.keyHash, { ...predecessor, expiresAt, updatedAt: successor.createdAt });
      },
    };
    const target = { name: 'memory', keys, metering: noMetering } as unknown as KeyAdminTarget;
    return { target, byHash, byId: (keyId: string) => keys.findById(keyId) as Promise<ApiKeyRecord> };
  }

  it('gives the successor the counters of the key it replaces, down a chain of rotations: the limits are the customer’s', async () => {
    const { target, byHash, byId } = memoryTarget();
    const { record: first } = generateApiKey({ plan: 'pro', owner: 'Acme', now: 0 });
    byHash.set(first.keyHash, first);
    expect(first.customerId).toBe(first.keyId);

    const second = await rotateKey(target, first.keyId, 86_400_000, 1_000);
    expect((await byId(second.successor.keyId)).customerId).toBe(first.keyId);
    // The successor of a successor, while the first is still in its grace: all three count together.
    const third = await rotateKey(target, second.successor.keyId, 86_400_000, 2_000);
    expect((await byId(third.successor.keyId)).customerId).toBe(first.keyId);
    for (const keyId of [first.keyId, second.successor.keyId, third.successor.keyId])
      expect((await byId(keyId)).customerId).toBe(first.keyId);
    // The key tool's view shows the customer, so `list` tells which secrets share one.
    expect([third.successor.customerId, third.predecessor.customerId]).toEqual([first.keyId, first.keyId]);
  });

  it('makes a newly issued key a customer of its own, named by the key’s id', () => {
    const { record } = generateApiKey({ plan: 'free', owner: 'Acme', now: 0 });
    expect(record.customerId).toBe(record.keyId);
  });
});
