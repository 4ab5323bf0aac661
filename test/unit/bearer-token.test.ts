import { bearerToken } from '../../functions/http/bearer-token';

/**
 * Decision 7: the authorizer accepts the Authorization header in one form only,
 * `Bearer <key>`, since API Gateway caches its answer by the exact header
 * (functions/http/bearer-token.ts). Every other form is refused by its shape.
 */
const key = `psk_${'Ab1_-'.repeat(8)}xyz`;

it('reads the token of exactly `Bearer <token>`', () => {
  expect(bearerToken(`Bearer ${key}`)).toBe(key);
  expect(bearerToken('Bearer abc')).toBe('abc');
});

it.each([
  ['the scheme in lowercase', `bearer ${key}`],
  ['the scheme in uppercase', `BEARER ${key}`],
  ['the scheme in mixed case', `bEaReR ${key}`],
  ['two spaces', `Bearer  ${key}`],
  ['a tab', `Bearer\t${key}`],
  ['a non-breaking space', `Bearer\u00a0${key}`],
  ['a leading space', ` Bearer ${key}`],
  ['a trailing space', `Bearer ${key} `],
  ['no space', `Bearer${key}`],
  ['two tokens', `Bearer ${key} ${key}`],
  ['no token', 'Bearer'],
  ['an empty token', 'Bearer '],
  ['another scheme', 'Basic dXNlcjpwYXNz'],
  ['an empty header', ''],
])('refuses %s', (_, authorization) => {
  expect(bearerToken(authorization)).toBeUndefined();
});

it('refuses a missing header', () => {
  expect(bearerToken(undefined)).toBeUndefined();
});
