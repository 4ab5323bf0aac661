import { IdAllocator } from '../../functions/domain/id-allocator';

describe('IdAllocator', () => {
  it('hands out a block in order and reserves the next block only when it is used up', async () => {
    const reservations: number[] = [];
    let last = 0;
    const allocator = new IdAllocator(async (count) => {
      reservations.push(count);
      last += count;
      return last - count + 1;
    }, 3);
    const ids = [];
    for (let index = 0; index < 7; index++) ids.push(await allocator.nextId());
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(reservations).toEqual([3, 3, 3]);
  });

  it('makes one reservation for many concurrent callers', async () => {
    let calls = 0;
    const allocator = new IdAllocator(async (count) => {
      calls++;
      await new Promise((resolve) => setImmediate(resolve));
      return (calls - 1) * count + 1;
    }, 50);
    const ids = await Promise.all(Array.from({ length: 50 }, () => allocator.nextId()));
    expect(new Set(ids).size).toBe(50);
    expect(calls).toBe(1);
  });

  it('surfaces a failed reservation and recovers on the next call', async () => {
    let fail = true;
    const allocator = new IdAllocator(async () => {
      if (fail) throw new Error('unavailable');
      return 100;
    }, 10);
    await expect(allocator.nextId()).rejects.toThrow('unavailable');
    fail = false;
    await expect(allocator.nextId()).resolves.toBe(100);
  });
});
