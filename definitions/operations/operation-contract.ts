import type * as z from 'zod';
import type { OperationId } from '../routes';

/** A JSON Schema, as the OpenAPI document writes it. */
export type JsonSchema = Record<string, unknown>;

/** What the document says of one path, query or header parameter. */
export interface ParameterDocs {
  description: string;
  /**
   * The JSON Schema of the value, where the zod schema cannot state it (a string
   * parsed by a regex and a transform); otherwise generated from the zod schema.
   */
  schema?: JsonSchema;
  example?: unknown;
}

/** A header of the success response. */
export interface ResponseHeaderDocs {
  description: string;
  /** Every success response carries it. */
  required: boolean;
  schema: JsonSchema;
}

/**
 * The whole contract of one operation, in one file per operation beside this
 * one: what it takes (path, query and header parameters, a JSON body), what it
 * answers (the success with its headers, the error statuses of its own
 * function), its limits, its documentation and code samples. The handler
 * validates with these schemas (functions/http/api-handler.ts) and the OpenAPI
 * generator (openapi/) documents them: neither can drift from the other, and
 * neither names an operation.
 */
export interface OperationContract {
  operationId: OperationId;
  /** The operation's description in the document (Markdown). */
  description: string;
  request: {
    /** Path parameters, as strings in, parsed values out. */
    path?: z.ZodObject;
    /** Query parameters; unknown ones are ignored, a repeated one is a 400. */
    query?: z.ZodObject;
    /** Request headers, keyed by their canonical name and matched case-insensitively. */
    headers?: z.ZodObject;
    /** A JSON body: with one, the function also checks size, Content-Type and syntax. */
    body?: z.ZodType;
    bodyDescription?: string;
  };
  /** The documentation of every path, query and header parameter above, keyed by its name. */
  parameters?: Readonly<Record<string, ParameterDocs>>;
  success: {
    status: 200 | 201;
    schema: z.ZodType;
    description: string;
    headers?: Readonly<Record<string, ResponseHeaderDocs>>;
  };
  /**
   * Error statuses this operation's function answers besides those of every
   * operation (401, 429, 500, 503; functions/http/api-handler.ts).
   */
  errorStatuses: readonly number[];
  /** What an error status means for this operation, where the general wording is not enough. */
  errorDescriptions?: Readonly<Partial<Record<number, string>>>;
  /** Limits the contract states in numbers (and the generated document quotes). */
  limits?: Readonly<Record<string, number>>;
  /** Shown beside the operation on the reference page: a curl command and the same with @petstore/client. */
  samples: { curl: string; client: string };
}

/** The parsed value of one part of the request, `undefined` when the operation takes none. */
export type RequestPart<
  Contract extends OperationContract,
  Part extends 'path' | 'query' | 'headers' | 'body',
> = Contract['request'][Part] extends z.ZodType ? z.output<Contract['request'][Part]> : undefined;

/** Keeps the literal types of a contract (its schemas) while checking its shape. */
export function defineOperation<const Contract extends OperationContract>(contract: Contract): Contract {
  return contract;
}
