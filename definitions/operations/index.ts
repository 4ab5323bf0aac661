import { type OperationId, routes } from '../routes';
import type { OperationContract } from './operation-contract';

/** Every operation's contract, keyed by operationId: read from the route table, whose rows point at them. */
export const operationContracts = Object.fromEntries(routes.map((route) => [route.operationId, route.contract])) as Record<
  OperationId,
  OperationContract
>;
