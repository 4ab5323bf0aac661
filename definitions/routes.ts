import { createPetContract } from './operations/create-pet';
import { getPetContract } from './operations/get-pet';
import { listPetsContract } from './operations/list-pets';
import type { OperationContract } from './operations/operation-contract';
import type { TableAccess } from './table-grants';

export { stageName } from './stage-name';

/**
 * The route table: the one source for every operation of the API. The CDK
 * stack builds one Lambda function, one API Gateway method and one IAM policy
 * per row; the local gateway routes requests with it; the docs derive from it.
 * Each row points at its operation's contract (definitions/operations/<op>.ts).
 */
export type OperationId = 'listPets' | 'createPet' | 'getPet';

export interface Deprecation {
  /** When the operation was deprecated (sent as the RFC 9745 `Deprecation` header). */
  deprecatedAt: string;
  /** When it stops working (RFC 8594 `Sunset` header); from then on it answers 410. */
  sunsetAt: string;
  /** Path of the replacement, relative to the stage (sent as a `successor-version` Link). */
  successorPath: string;
}

export interface RouteDefinition {
  /** The contract's operationId. */
  operationId: OperationId;
  /** What the operation takes and answers: its handler validates with it, the OpenAPI document describes it. */
  contract: OperationContract;
  method: 'GET' | 'POST';
  /** Path below the stage, with `{name}` for path parameters. */
  path: string;
  summary: string;
  /** Lambda entry file, relative to the project root; it exports `handler` and `createHandler`. */
  handlerEntry: string;
  /** The DynamoDB actions the function may take, per table: nothing else is granted (definitions/table-grants.ts). */
  access: TableAccess;
  deprecation?: Deprecation;
}

/**
 * Every operation counts its request against the caller's rate limits
 * (UpdateItem), and reads the key's state on its counters where it answers
 * without a write (GetItem: functions/rate-limit/limiter.ts).
 */
const rateLimitAccess = ['dynamodb:UpdateItem', 'dynamodb:GetItem'] as const;

/** A row of the table, named after its contract. */
const route = (row: Omit<RouteDefinition, 'operationId'>): RouteDefinition => ({ operationId: row.contract.operationId, ...row });

export const routes: readonly RouteDefinition[] = [
  route({
    contract: listPetsContract,
    method: 'GET',
    path: '/pets',
    summary: 'List pets in ascending id order, optionally filtered by status.',
    handlerEntry: 'functions/list-pets/handler.ts',
    // Query reads a page from the list indexes; when a page reaches the newest pets, GetItem reads a copy
    // of the block counter (which id blocks exist: functions/data/block-counter.ts).
    access: { pets: ['dynamodb:Query', 'dynamodb:GetItem'], rateLimits: rateLimitAccess },
  }),
  route({
    contract: createPetContract,
    method: 'POST',
    path: '/pets',
    summary: 'Add a pet.',
    handlerEntry: 'functions/create-pet/handler.ts',
    // UpdateItem reserves a block of ids on the block counter and writes its copies
    // (functions/data/block-counter.ts); PutItem writes the pet;
    // GetItem looks for the pet of a record whose COMPLETED mark was lost, when its key is
    // replayed within the lease (functions/domain/pet-creation.ts). The idempotency records
    // are claimed (a conditional PutItem that returns the record already there) and
    // completed; never read apart, never deleted.
    access: {
      pets: ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:GetItem'],
      rateLimits: rateLimitAccess,
      idempotency: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
    },
  }),
  route({
    contract: getPetContract,
    method: 'GET',
    path: '/pets/{petId}',
    summary: 'Get one pet by id (deprecated: use GET /pets).',
    handlerEntry: 'functions/get-pet/handler.ts',
    access: { pets: ['dynamodb:GetItem'], rateLimits: rateLimitAccess },
    deprecation: {
      deprecatedAt: '2026-01-01T00:00:00Z',
      sunsetAt: '2030-12-05T00:00:00Z',
      successorPath: '/pets',
    },
  }),
];

/**
 * Timeout of every function. It exceeds the DynamoDB time budget of an operation
 * (functions/runtime/dependencies.ts), so a slow dependency gives a 503, never a
 * Lambda timeout (which API Gateway would turn into a bare 502/504).
 */
export const functionTimeoutSeconds = 10;

/** The Lambda REQUEST authorizer in front of every route. */
export const authorizer = {
  handlerEntry: 'functions/authorizer/handler.ts',
  identityHeader: 'Authorization',
  /**
   * How long API Gateway caches an authorizer answer per Authorization value.
   * A revoked key, or a key moved to another plan, takes effect within this time.
   */
  resultsCacheTtlSeconds: 300,
  // GetItem on a key by its hash; GetItem on the customer's counter item of the day, for its ban
  // (functions/rate-limit/bans.ts): the authorizer never writes.
  access: { apiKeys: ['dynamodb:GetItem'], rateLimits: ['dynamodb:GetItem'] },
} as const satisfies { handlerEntry: string; identityHeader: string; resultsCacheTtlSeconds: number; access: TableAccess };

/** Every Lambda function of the API: one per route, named by its operationId, and the authorizer. */
export const lambdaFunctions: readonly { name: string; entry: string; access: TableAccess }[] = [
  ...routes.map((route) => ({ name: route.operationId, entry: route.handlerEntry, access: route.access })),
  { name: 'authorizer', entry: authorizer.handlerEntry, access: authorizer.access },
];

/** The table access of a Lambda function of the API, by its name (an operationId, or `authorizer`). */
export function accessOfFunction(name: string): TableAccess {
  const fn = lambdaFunctions.find((candidate) => candidate.name === name);
  if (!fn) throw new Error(`No function named ${name} in the route table`);
  return fn.access;
}

export function routeFor(operationId: OperationId): RouteDefinition {
  const route = routes.find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`No route for ${operationId}`);
  return route;
}
