import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, callerFrom, toAuthorizerContext } from '../../functions/http/caller';

/** The authorizer's context as the functions read it back (functions/http/caller.ts). */
const eventWith = (authorizer: Record<string, string>) => ({ requestContext: { authorizer } }) as unknown as APIGatewayProxyEvent;

it('carries whose counters a key counts on, from the authorizer to the functions', () => {
  const successor: Caller = { keyId: 'key_2', countersId: 'key_1', plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } };
  expect(callerFrom(eventWith(toAuthorizerContext(successor)))).toEqual(successor);
});

it('counts a key on its own counters when a cached answer of an earlier authorizer names none', () => {
  const cached = { keyId: 'key_1', plan: 'free', perMinute: '60', perDay: '1000' };
  expect(callerFrom(eventWith(cached))).toEqual({
    keyId: 'key_1',
    countersId: 'key_1',
    plan: 'free',
    limits: { perMinute: 60, perDay: 1_000 },
  });
});
