import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * How `npm start` tells the key tool where its DynamoDB Local listens (a free
 * port chosen at run time): local/start.ts writes this file once started and
 * removes it when it stops; admin/targets/local.ts reads it.
 */
export interface LocalEndpoint {
  dynamoEndpoint: string;
  tablePrefix: string;
  /** Where the gateway reads its usage plans and the key tool writes them (local/usage-plans.ts); unset, localUsagePlansDir. */
  usagePlansDir?: string;
}

/** The prefix of `npm start`'s table names (`petstore-local-pets`, …). */
export const localTablePrefix = 'petstore-local';

/** Where `npm start` keeps its state (data, development key, this file): `.local`, or PETSTORE_LOCAL_DIR. */
export const localStateDir = process.env.PETSTORE_LOCAL_DIR || join(__dirname, '..', '.local');
export const localEndpointFile = join(localStateDir, 'local-endpoint.json');
/** The usage plans of `npm start`'s gateway, one file per metering key (local/usage-plans.ts). */
export const localUsagePlansDir = join(localStateDir, 'usage-plans');

export function writeLocalEndpoint(endpoint: LocalEndpoint, file: string = localEndpointFile): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(endpoint, null, 2)}\n`);
}

/** Removes the file if it still describes `endpoint` (another `npm start` may have replaced it). */
export function removeLocalEndpoint(endpoint: LocalEndpoint, file: string = localEndpointFile): void {
  if (readLocalEndpoint(file)?.dynamoEndpoint === endpoint.dynamoEndpoint) rmSync(file, { force: true });
}

/** The endpoint of the running `npm start`, or undefined when the file is missing or unreadable. */
export function readLocalEndpoint(file: string = localEndpointFile): LocalEndpoint | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalEndpoint>;
    if (typeof parsed.dynamoEndpoint !== 'string' || typeof parsed.tablePrefix !== 'string') return undefined;
    const usagePlansDir = typeof parsed.usagePlansDir === 'string' ? { usagePlansDir: parsed.usagePlansDir } : {};
    return { dynamoEndpoint: parsed.dynamoEndpoint, tablePrefix: parsed.tablePrefix, ...usagePlansDir };
  } catch {
    return undefined;
  }
}
