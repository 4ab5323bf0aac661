import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CustomerTable, generateApiKey, hashApiKey, isUsable, isWellFormedApiKey } from '../functions/customers';
import type { Dependencies } from '../functions/runtime/dependencies';

/**
 * The development key of `npm start`: a Business key made on first run. The
 * table keeps only its hash, so the secret itself is kept in a git-ignored
 * file to be printed at every start, readable by its owner only (made 0600 at
 * every start). Made again if the file is gone or its key was revoked. A
 * DynamoDB that does not know the key (npm start switched between DynamoDB
 * Local and AWS_ENDPOINT_URL_DYNAMODB) gets the same key: one development key
 * across endpoints, never a second one left behind in the first.
 */
export async function ensureDevelopmentKey(dependencies: Dependencies, secretFile: string): Promise<string> {
  const keys = new CustomerTable(dependencies.db, dependencies.tableNames);
  const developmentKey = (secret?: string) =>
    generateApiKey({ plan: 'business', owner: 'local development', now: dependencies.clock(), ...(secret ? { given: { secret } } : {}) });
  if (existsSync(secretFile)) {
    // Only its owner may read it, whatever happened to the file since (a copy, a checkout, a chmod).
    chmodSync(secretFile, 0o600);
    const secret = readFileSync(secretFile, 'utf8').trim();
    const record = await keys.findByHash(hashApiKey(secret));
    if (record && isUsable(record, dependencies.clock())) return secret;
    if (!record && isWellFormedApiKey(secret)) {
      // This DynamoDB has never seen the key: enrol the same secret here.
      await keys.insert(developmentKey(secret).record);
      return secret;
    }
  }
  const { secret, record } = developmentKey();
  await keys.insert(record);
  mkdirSync(dirname(secretFile), { recursive: true });
  // `mode` applies only when the file is created: a file replaced here keeps its mode unless set again.
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  chmodSync(secretFile, 0o600);
  return secret;
}
