import { authorizer, routes } from '../../definitions/routes';

/**
 * The contenders of the benchmark, each bundled on its own:
 *   ours     the route table's handler entries and the authorizer;
 *   plain    (a) one plain handler per route, no framework, written as a careful engineer would;
 *   express  (b) one Express app for every route behind @vendia/serverless-express;
 *   floor    (c) the operation's DynamoDB request alone: no limiter, no validation framework.
 * The plain and Express baselines do the same DynamoDB work per request as ours (limiter, id blocks).
 */
export type Implementation = 'ours' | 'plain' | 'express' | 'floor';
export type Operation = 'getPet' | 'createPet' | 'listPets';
export const operations: readonly Operation[] = ['getPet', 'createPet', 'listPets'];
export const implementations: readonly Implementation[] = ['ours', 'plain', 'express', 'floor'];

/** The bundle that serves an operation for an implementation (Express serves all of them from one app). */
export function bundleName(impl: Implementation, op: Operation): string {
  return impl === 'express' ? 'express' : `${impl}-${op}`;
}

export const authorizerBundles = { ours: 'ours-authorizer', plain: 'plain-authorizer' } as const;

/** Every bundle to build: name and entry file, relative to the project root. */
export function bundleEntries(): [string, string][] {
  return [
    ...routes.map((route): [string, string] => [bundleName('ours', route.operationId), route.handlerEntry]),
    [authorizerBundles.ours, authorizer.handlerEntry],
    ['plain-getPet', 'bench/baselines/plain/get-pet.ts'],
    ['plain-createPet', 'bench/baselines/plain/create-pet.ts'],
    ['plain-listPets', 'bench/baselines/plain/list-pets.ts'],
    [authorizerBundles.plain, 'bench/baselines/plain/authorizer.ts'],
    ['express', 'bench/baselines/express/handler.ts'],
    ['floor-getPet', 'bench/baselines/floor/get-pet.ts'],
    ['floor-createPet', 'bench/baselines/floor/create-pet.ts'],
    ['floor-listPets', 'bench/baselines/floor/list-pets.ts'],
  ];
}

export const expectedStatus: Record<Operation, number> = { getPet: 200, createPet: 201, listPets: 200 };
