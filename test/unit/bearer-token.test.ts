import { bearerToken, soleAuthorization } from '../../functions/http/bearer-token';

/**
 * Decision 7: the Authorization header as RFC 6750 section 2.1 and RFC 9110
 * section 11.1 write it, `Bearer` in any case, one or more spaces, one token
 * (functions/http/bearer-token.ts). Every other form is refused by its shape.
 */
const key = `psk_${'Ab1_-'.repeat(8)}xyz`;

it.each([
  ['the canonical form', `Bearer ${key}`],
  ['the scheme in lowercase (OAuth token_type "bearer")', `bearer ${key}`],
  ['the scheme in uppercase', `BEARER ${key}`],
  ['the scheme in mixed case', `bEaReR ${key}`],
  ['two spaces', `Bearer  ${key}`],
  ['many spaces', `BEARER     ${key}`],
])('reads the token of %s', (_, authorization) => {
  expect(bearerToken(authorization)).toBe(key);
});

it.each([
  ['a tab', `Bearer\t${key}`],
  ['a space and a tab', `Bearer \t${key}`],
  ['a non-breaking space', `Bearer\u00a0${key}`],
  ['a leading space', ` Bearer ${key}`],
  ['a trailing space', `Bearer ${key} `],
  ['no space', `Bearer${key}`],
  ['two tokens', `Bearer ${key} ${key}`],
  ['two credentials joined by a comma', `Bearer ${key}, Bearer ${key}`],
  ['no token', 'Bearer'],
  ['an empty token', 'Bearer '],
  ['another scheme', 'Basic dXNlcjpwYXNz'],
  ['a scheme that only starts with Bearer', `Bearerx ${key}`],
  ['an empty header', ''],
])('refuses %s', (_, authorization) => {
  expect(bearerToken(authorization)).toBeUndefined();
});

it('refuses a missing header', () => {
  expect(bearerToken(undefined)).toBeUndefined();
});

describe('the one Authorization field (RFC 9110: a singleton)', () => {
  it('is the field a request sent once, found in any case of its name', () => {
    expect(soleAuthorization({ headers: { authorization: 'Bearer a' }, multiValueHeaders: { authorization: ['Bearer a'] } })).toBe(
      'Bearer a',
    );
    expect(soleAuthorization({ headers: { Authorization: 'Bearer a' }, multiValueHeaders: null })).toBe('Bearer a');
  });

  it.each([
    ['valid first', ['Bearer a', 'junk']],
    ['valid last', ['junk', 'Bearer a']],
    ['the same twice', ['Bearer a', 'Bearer a']],
  ])('is none when the field was sent twice, %s', (_, values) => {
    expect(soleAuthorization({ headers: { Authorization: values.at(-1) }, multiValueHeaders: { Authorization: values } })).toBeUndefined();
  });

  it('is none when the two fields differ only in the name’s case', () => {
    const event = {
      headers: { authorization: 'Bearer a' },
      multiValueHeaders: { Authorization: ['Bearer a'], authorization: ['Bearer b'] },
    };
    expect(soleAuthorization(event)).toBeUndefined();
  });

  it('is none when the request has none', () => {
    expect(soleAuthorization({ headers: {}, multiValueHeaders: {} })).toBeUndefined();
  });
});
