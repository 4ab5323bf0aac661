// Uses the client that openapi-typescript + openapi-fetch generate from openapi/openapi.json, unmodified.
// Copied into a temporary folder beside the generated `schema.d.ts` by test/e2e/generated-clients.test.ts.
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

type Pet = components['schemas']['Pet'];
type ErrorObject = components['schemas']['ErrorObject'];
const NEXT_CURSOR = 'X-Next-Cursor';
// The document types the header: were it undeclared, its type would be `unknown` and this would not compile.
type NextCursor = NonNullable<paths['/pets']['get']['responses'][200]['headers']>[typeof NEXT_CURSOR];
const nextCursorIsTyped: [NextCursor] extends [string | undefined] ? true : false = true;

const client = createClient<paths>({ baseUrl: process.env.API_URL, headers: { Authorization: `Bearer ${process.env.API_KEY}` } });

async function main(): Promise<void> {
  const created: Pet[] = [];
  for (let index = 0; index < 45; index++) {
    const { data, error } = await client.POST('/pets', {
      params: { header: { 'Idempotency-Key': `"openapi-fetch-${index}"` } },
      body: { name: `Generated ${index}`, categoryId: 7, status: 'pending' },
    });
    if (!data) throw new Error(`create failed: ${JSON.stringify(error)}`);
    created.push(data);
  }
  const seen: Pet[] = [];
  let pages = 0;
  let cursor: string | undefined;
  do {
    const { data, error, response } = await client.GET('/pets', { params: { query: { status: 'pending', limit: 10, cursor } } });
    if (!data) throw new Error(`list failed: ${JSON.stringify(error)}`);
    pages++;
    seen.push(...data);
    cursor = response.headers.get(NEXT_CURSOR) ?? undefined;
  } while (cursor);
  const first = created[0] as Pet;
  const one = await client.GET('/pets/{petId}', { params: { path: { petId: first.id } } });
  const invalid = await client.POST('/pets', { body: { name: ' ', categoryId: 1 } });
  const missing = await client.GET('/pets/{petId}', { params: { path: { petId: 9_007_199_254_740_991 } } });
  // Typed error bodies: `code` is the closed union of the document.
  const badRequest: ErrorObject | undefined = invalid.error;
  const notFound: ErrorObject | undefined = missing.error;
  if (!nextCursorIsTyped) throw new Error('unreachable');
  console.log(JSON.stringify({ created: created.map((pet) => pet.id), seen: seen.map((pet) => pet.id), pages, one: one.data, first, badRequest, notFound }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
