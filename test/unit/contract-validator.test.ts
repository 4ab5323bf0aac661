import committedDocument from '../../openapi/openapi.json';
import { ContractValidator, contract } from '../support/contract';

/**
 * The contract checker that test/support/api.ts runs on every response of the
 * HTTP end-to-end suite: it must refuse what the document does not allow.
 */
const base = 'http://localhost:3000/v1';
const rateLimit = { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '59', 'X-RateLimit-Reset': '1880000000' };
const json = { 'Content-Type': 'application/json' };
/** What every 201 carries besides: the URL of the pet. */
const created = { ...json, Location: `${base}/pets/1` };
const rex = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

function check(method: string, path: string, status: number, headers: Record<string, string>, body: unknown, validator = contract) {
  return validator.violations(method, `${base}${path}`, {
    status,
    headers: new Headers(headers),
    body: body === undefined ? '' : JSON.stringify(body),
  });
}

it('accepts responses the document describes', () => {
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit, 'Cache-Control': 'no-store' }, rex)).toEqual([]);
  expect(
    check('GET', '/pets?limit=1', 200, { ...json, ...rateLimit, Link: `<${base}/pets?limit=1&cursor=abc>; rel="next"` }, [rex]),
  ).toEqual([]);
  expect(
    check('GET', '/pets', 401, { ...json, 'WWW-Authenticate': 'Bearer' }, { code: 'unauthorized', message: 'No key.', status: 401 }),
  ).toEqual([]);
  expect(
    check('GET', '/pets', 429, { ...json, ...rateLimit, 'Retry-After': '55' }, { code: 'key_suspended', message: 'Wait.', status: 429 }),
  ).toEqual([]);
  expect(check('DELETE', '/pets', 404, json, { code: 'not_found', message: 'No such route.', status: 404 })).toEqual([]);
  expect(check('GET', '/owners', 404, json, { code: 'not_found', message: 'No such route.', status: 404 })).toEqual([]);
});

it('refuses a body that does not match the schema', () => {
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit }, { ...rex, status: 'lost' })).toEqual([expect.stringContaining('body')]);
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit }, { ...rex, owner: 'me' })).toEqual([
    expect.stringContaining('additional properties'),
  ]);
  expect(check('GET', '/pets', 200, { ...json, ...rateLimit }, rex)).toEqual([expect.stringContaining('must be array')]);
  // An Error object whose code does not belong to its status.
  expect(check('GET', '/pets/1', 404, { ...json, ...rateLimit }, { code: 'invalid_request', message: 'x', status: 404 })).not.toEqual([]);
  expect(check('GET', '/pets/1', 404, { ...json, ...rateLimit }, { code: 'surprise', message: 'x', status: 404 })).not.toEqual([]);
});

it('refuses an undocumented status', () => {
  expect(check('GET', '/pets', 404, { ...json, ...rateLimit }, { code: 'not_found', message: 'x', status: 404 })).toEqual([
    expect.stringContaining('status 404 is not documented for listPets'),
  ]);
  expect(check('POST', '/pets', 200, { ...json, ...rateLimit }, rex)).toEqual([expect.stringContaining('not documented')]);
  expect(check('GET', '/owners', 401, json, { code: 'unauthorized', message: 'x', status: 401 })).toEqual([
    expect.stringContaining('unknown route'),
  ]);
});

it('refuses a missing required header, an invalid header value, and undocumented X-, Link and Retry-After headers', () => {
  const { 'X-RateLimit-Remaining': _, ...withoutRemaining } = rateLimit;
  expect(check('POST', '/pets', 201, { ...created, ...withoutRemaining }, rex)).toEqual([
    expect.stringContaining('required header X-RateLimit-Remaining is missing'),
  ]);
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit, 'X-RateLimit-Remaining': 'many' }, rex)).toEqual([
    expect.stringContaining('X-RateLimit-Remaining'),
  ]);
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit, 'X-Debug': '1' }, rex)).toEqual([
    expect.stringContaining('header x-debug is not documented'),
  ]);
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit, 'Retry-After': '1' }, rex)).toEqual([
    expect.stringContaining('header retry-after is not documented'),
  ]);
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit, Link: `<${base}/pets>; rel="next"` }, rex)).toEqual([
    expect.stringContaining('header link is not documented'),
  ]);
  expect(check('GET', '/pets/1', 200, { ...json, ...rateLimit }, rex)).toEqual([
    expect.stringContaining('Deprecation'),
    expect.stringContaining('Sunset'),
    expect.stringContaining('Link'),
  ]);
  expect(check('GET', '/owners', 404, { ...json, ...rateLimit }, { code: 'not_found', message: 'x', status: 404 })).toHaveLength(3);
  expect(check('GET', '/pets', 429, { ...json, ...rateLimit }, { code: 'rate_limited', message: 'x', status: 429 })).toEqual([
    expect.stringContaining('Retry-After is missing'),
  ]);
});

it('fails the end-to-end suite when the document changes without the code: e.g. a status value dropped from PetStatus', () => {
  const changed = structuredClone(committedDocument) as { components: { schemas: { PetStatus: { enum: string[] } } } };
  changed.components.schemas.PetStatus.enum = ['available', 'pending'];
  const stale = new ContractValidator(changed as unknown as Record<string, unknown>);
  const sold = { ...rex, status: 'sold' };
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit }, sold)).toEqual([]);
  expect(check('POST', '/pets', 201, { ...created, ...rateLimit }, sold, stale)).toEqual([
    expect.stringContaining('must be equal to one of the allowed values'),
  ]);
});

it('refuses a 201 without the Location of the pet', () => {
  expect(check('POST', '/pets', 201, { ...json, ...rateLimit }, rex)).toEqual(['POST /v1/pets → 201: required header Location is missing']);
});
