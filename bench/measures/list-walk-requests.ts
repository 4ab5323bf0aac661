import { PetRepository } from '../../functions/data/pet-repository';
import { createPet } from '../../functions/domain/pet-creation';
import { listPets } from '../../functions/domain/pets';
import { CountingPetList, idAllocatorOn } from '../../test/support/pet-list';
import { adminClient, createTables } from '../support/dynamodb';
import type { BenchRun } from '../support/run-context';

const INSTANCES = 8;
const PETS = 2_000;

/**
 * Queries per listPets page over the sharded list indexes, on a table filled
 * the way many instances fill it: 2,000 pets created by 8 instances at once,
 * each with its own allocator (so blocks interleave and some are left part-used).
 * A fresh reader (no cached ranges: the pets are new, so no block is sealed yet)
 * walks every page with limit 20 and with limit 100; each Query is counted, and
 * so is each read of which blocks exist (a GetItem of a copy of the block counter,
 * when a page reaches the newest pets), reported beside the Queries.
 */
export async function measureListWalkRequests(run: BenchRun, endpoint: string): Promise<void> {
  run.progress(`Queries per listPets page: ${PETS} pets created by ${INSTANCES} instances, then walked with limits 20 and 100`);
  const names = await createTables(endpoint, 'bench-walk');
  const db = adminClient(endpoint);
  const clock = () => Date.now();
  const writers = Array.from({ length: INSTANCES }, () => {
    const pets = new PetRepository(db, names.pets);
    return { pets, ids: idAllocatorOn(db, names.pets), clock };
  });
  await Promise.all(
    writers.map(async (writer, instance) => {
      for (let i = instance; i < PETS; i += INSTANCES) await createPet({ name: `Pet ${i}`, categoryId: 1 }, writer);
    }),
  );
  for (const limit of [20, 100]) {
    const reader = new CountingPetList(db, names.pets);
    let pages = 0;
    let seen = 0;
    let cursor: string | undefined;
    do {
      const page = await listPets({ limit, cursor }, { list: reader, clock });
      pages++;
      seen += page.pets.length;
      cursor = page.nextCursor;
    } while (cursor);
    if (seen !== PETS) throw new Error(`The walk with limit ${limit} saw ${seen} pets of ${PETS}`);
    const perPage = reader.queriesSent / pages;
    const target = limit === 20 ? 1.2 : 2;
    const met = perPage <= target;
    run.checks.push({ label: `listPets: Queries per page of ${limit}`, met, detail: `${perPage.toFixed(2)} (≤ ${target})` });
    run.rows.push({
      measure: `DynamoDB Queries per listPets page of ${limit} (walk of ${PETS} pets made by ${INSTANCES} instances)`,
      ours: `${perPage.toFixed(2)} (${reader.queriesSent} Queries, ${pages} pages; and ${reader.frontierReadsSent} reads of which blocks exist: a copy of the block counter)`,
      plain: '—',
      express: '—',
      floor: '1',
      ratio: '—',
      target: `≤ ${target}`,
      met: met ? 'yes' : 'NO',
    });
  }
  db.destroy();
}
