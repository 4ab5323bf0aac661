import { randomBytes } from 'node:crypto';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type RestRequest, requestAuthorizerEvent } from '../../test/support/api-gateway-events';

/**
 * The bench's requests, as the events of test/support/api-gateway-events.ts
 * (what an edge-optimized REST API sends behind a REQUEST authorizer). The
 * caller is an Enterprise key with limits so high that the limiter counts every
 * request and never refuses one.
 */
export const ENTERPRISE_LIMIT = 1_000_000_000;

const bearer = `Bearer psk_${randomBytes(32).toString('base64url')}`;

/** What the authorizer found: each contender counts under a key id of its own. */
const enterpriseCaller = (keyId: string) => ({
  keyId,
  customerId: keyId,
  plan: 'enterprise',
  perMinute: String(ENTERPRISE_LIMIT),
  perDay: String(ENTERPRISE_LIMIT),
  principalId: keyId,
});

/** The requests of the benchmark, per operation. */
export const requests = {
  getPet: (keyId: string, petId: number): RestRequest => ({
    method: 'GET',
    resource: '/pets/{petId}',
    path: `/pets/${petId}`,
    pathParameters: { petId: String(petId) },
    headers: { Authorization: bearer },
    authorizer: enterpriseCaller(keyId),
  }),
  createPet: (keyId: string, sequence: number): RestRequest => ({
    method: 'POST',
    resource: '/pets',
    path: '/pets',
    body: JSON.stringify({ name: `Bench pet ${sequence}`, categoryId: 1 + (sequence % 7), status: 'available' }),
    headers: { Authorization: bearer },
    authorizer: enterpriseCaller(keyId),
  }),
  listPets: (keyId: string): RestRequest => ({
    method: 'GET',
    resource: '/pets',
    path: '/pets',
    query: { limit: '20' },
    headers: { Authorization: bearer },
    authorizer: enterpriseCaller(keyId),
  }),
};

/** The REQUEST authorizer's event for GET /pets/{petId} with this secret. */
export function authorizerEvent(secret: string, petId: number): APIGatewayRequestAuthorizerEvent {
  const { authorizer: _none, ...request } = requests.getPet('unknown', petId);
  return requestAuthorizerEvent({ ...request, headers: { Authorization: `Bearer ${secret}` } });
}
