import type { CustomerSecrets, CustomerTable, MeteredCustomer } from '../../functions/customers';
import type { UsageCounters } from '../../functions/rate-limit';

/**
 * Where the key tool works: the local DynamoDB of `npm start`, or a deployed
 * stage (DynamoDB plus API Gateway metering). The rules of admin/key-admin.ts
 * run the same against either.
 */
export interface KeyAdminTarget {
  /** For messages, e.g. `local (npm start)` or `staging (PetStore-Staging)`. */
  readonly name: string;
  readonly keys: CustomerTable;
  readonly counters: UsageCounters;
  readonly metering: Metering;
  close(): void;
}

/**
 * What API Gateway needs to meter a customer in its usage plan: an API key whose
 * value is the customer's meteringKey, member of its plan's usage plan (an
 * Enterprise customer: of a usage plan of its own). Each change is made before the
 * DynamoDB write and can be undone if that write fails; what cannot be undone
 * (deleting things), and what would refuse requests the old record still
 * allows (lowering a usage plan: a raise comes first, a lowering last, so no
 * request the new plan allows is refused), waits for `finish`, after the write succeeded.
 */
export interface Metering {
  /** Creates the metering of a new customer. Undo deletes it. */
  enrol(customer: MeteredCustomer): Promise<MeteringChange>;
  /** Moves the metering to `after`'s plan and limits. Undo moves it back; finish lowers a usage plan, deletes what `before` alone used. */
  changePlan(before: MeteredCustomer, after: MeteredCustomer): Promise<MeteringChange>;
  /** Stops metering a customer (disables its API key, leaves its usage plan). Undo restores it; finish deletes it. Repeatable. */
  withdraw(customer: MeteredCustomer): Promise<MeteringChange>;
  /** Releases API keys and usage plans that no working secret needs and no cached authorizer answer names any more. Idempotent. */
  release(customers: CustomerSecrets[], now: number, progress?: (line: string) => void): Promise<MeteringRelease>;
}

/** What a release did: API keys released, and those to release later (a cached authorizer answer may still name them). */
export interface MeteringRelease {
  released: number;
  waiting: { keyId: string; releasableAt: string }[];
}

export interface MeteringChange {
  undo(): Promise<void>;
  finish(): Promise<void>;
}

export const nothingToChange: MeteringChange = { undo: async () => {}, finish: async () => {} };

/** A key table with no gateway in front (our own counters enforce the limits); `npm start`'s gateway has localMetering (admin/targets/local.ts). */
export const noMetering: Metering = {
  enrol: async () => nothingToChange,
  changePlan: async () => nothingToChange,
  withdraw: async () => nothingToChange,
  release: async () => ({ released: 0, waiting: [] }),
};
