import { generateApiKey, hashApiKey, isUsable, isWellFormedApiKey } from '../../functions/customers';

describe('API keys', () => {
  it('are random, prefixed, well-formed, and stored only as their SHA-256 hash', () => {
    const { secret, record } = generateApiKey({ plan: 'pro', owner: 'Acme', now: 0 });
    const other = generateApiKey({ plan: 'pro', owner: 'Acme', now: 0 });
    expect(secret).toMatch(/^psk_[A-Za-z0-9_-]{43}$/);
    expect(isWellFormedApiKey(secret)).toBe(true);
    expect(other.secret).not.toBe(secret);
    expect(record.keyHash).toBe(hashApiKey(secret));
    expect(JSON.stringify(record)).not.toContain(secret.slice(4));
    expect(record.displayPrefix).toBe(secret.slice(0, 12));
    expect(record.meteringKey).toMatch(/^[a-f0-9]{48}$/);
  });

  it('are usable only while active and before their expiry', () => {
    const { record } = generateApiKey({ plan: 'free', owner: 'x', now: 0 });
    expect(isUsable(record, 1)).toBe(true);
    expect(isUsable({ ...record, status: 'revoked' }, 1)).toBe(false);
    expect(isUsable({ ...record, expiresAt: new Date(1000).toISOString() }, 999)).toBe(true);
    expect(isUsable({ ...record, expiresAt: new Date(1000).toISOString() }, 1000)).toBe(false);
  });
});
