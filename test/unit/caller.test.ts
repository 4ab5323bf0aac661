import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, callerFrom, toAuthorizerContext } from '../../functions/http/caller';

/** The authorizer's context as the functions read it back (functions/http/caller.ts). */
const eventWith = (authorizer: Record<string, string>) => ({ requestContext: { authorizer } }) as unknown as APIGatewayProxyEvent;

it('carries the customer a key is a secret of, from the authorizer to the functions', () => {
  const successor: Caller = { keyId: 'key_2', customerId: 'key_1', plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } };
  expect(callerFrom(eventWith(toAuthorizerContext(successor)))).toEqual(successor);
});

it('refuses a context that names no customer: the limiter would count it on nothing', () => {
  const withoutCustomer = { keyId: 'key_1', plan: 'free', perMinute: '60', perDay: '1000' };
  expect(callerFrom(eventWith(withoutCustomer))).toBeUndefined();
});
