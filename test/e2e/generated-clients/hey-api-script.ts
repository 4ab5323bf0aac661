// Uses the client that @hey-api/openapi-ts generates from openapi/openapi.json, unmodified.
// Copied into a temporary folder beside the generated `hey-api/` by test/e2e/generated-clients.test.ts.
import { client } from './hey-api/client.gen';
import { createPet, getPet, listPets } from './hey-api/sdk.gen';
import type { ErrorObject, Pet } from './hey-api/types.gen';

client.setConfig({ baseUrl: process.env.API_URL, auth: () => process.env.API_KEY });

async function main(): Promise<void> {
  const created: Pet[] = [];
  for (let index = 0; index < 45; index++) {
    const { data, error } = await createPet({ headers: { 'Idempotency-Key': `"hey-api-${index}"` }, body: { name: `Generated ${index}`, categoryId: 8, status: 'sold' } });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    created.push(data);
  }
  const seen: Pet[] = [];
  let pages = 0;
  let cursor: string | undefined;
  do {
    const { data, error, response } = await listPets({ query: { status: 'sold', limit: 10, cursor } });
    if (!data) throw new Error(`list failed: ${JSON.stringify(error)}`);
    pages++;
    seen.push(...data);
    cursor = response.headers.get('X-Next-Cursor') ?? undefined;
  } while (cursor);
  const first = created[0] as Pet;
  const one = await getPet({ path: { petId: first.id } });
  const invalid = await createPet({ body: { name: ' ', categoryId: 1 } });
  const missing = await getPet({ path: { petId: 9_007_199_254_740_991 } });
  // Typed error bodies: `code` is the closed union of the document.
  const badRequest: ErrorObject | undefined = invalid.error;
  const notFound: ErrorObject | undefined = missing.error;
  console.log(JSON.stringify({ created: created.map((pet) => pet.id), seen: seen.map((pet) => pet.id), pages, one: one.data, first, badRequest, notFound }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
