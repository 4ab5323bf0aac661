import type * as z from 'zod';
import type { OperationId } from '../routes';

/**
 * The contract of one operation, in one file per operation beside this one:
 * what it takes (query, path parameters, JSON body), what it answers on
 * success, which error statuses its own function can answer, and its limits.
 * The handler validates with these schemas (functions/http/api-handler.ts) and
 * the OpenAPI generator (openapi/) documents them: neither can drift from the other.
 */
export interface OperationContract {
  operationId: OperationId;
  request: {
    /** Query parameters; unknown ones are ignored. */
    query?: z.ZodType;
    /** Path parameters, as strings in, parsed values out. */
    path?: z.ZodType;
    /** A JSON body: with one, the function also checks size, Content-Type and syntax. */
    body?: z.ZodType;
  };
  success: { status: 200 | 201; schema: z.ZodType; description: string };
  /**
   * Error statuses this operation's function answers besides those of every
   * operation (401, 429, 500, 503; functions/http/api-handler.ts).
   */
  errorStatuses: readonly number[];
  /** Limits the contract states in numbers (and the generated document quotes). */
  limits?: Readonly<Record<string, number>>;
}

/** The parsed value of one part of the request, `undefined` when the operation takes none. */
export type RequestPart<
  Contract extends OperationContract,
  Part extends keyof OperationContract['request'],
> = Contract['request'][Part] extends z.ZodType ? z.output<Contract['request'][Part]> : undefined;

/** Keeps the literal types of a contract (its schemas) while checking its shape. */
export function defineOperation<const Contract extends OperationContract>(contract: Contract): Contract {
  return contract;
}
