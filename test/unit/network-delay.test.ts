import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startNetworkDelay } from '../../bench/support/network-delay';

// The bench's round-trip measure (bench/measures/round-trips.ts) counts round
// trips by the latency this relay adds: it must add a whole round trip to each
// request, and pass what it relays unchanged.
let upstream: Server;
let upstreamEndpoint: string;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => response.end(`echo:${body}`));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamEndpoint = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => upstream.close(resolve)));

async function timedPost(endpoint: string, body: string): Promise<{ text: string; ms: number }> {
  const start = performance.now();
  const response = await fetch(endpoint, { method: 'POST', body });
  const text = await response.text();
  return { text, ms: performance.now() - start };
}

it('adds at least one round trip to every request on a kept-alive connection, and relays bodies unchanged', async () => {
  const delay = await startNetworkDelay(upstreamEndpoint, 60);
  try {
    const body = 'x'.repeat(200_000);
    for (let i = 0; i < 3; i++) {
      const { text, ms } = await timedPost(delay.endpoint, body);
      expect(text).toBe(`echo:${body}`);
      // Timers fire no earlier than asked; performance.now() rounds, hence the 1 ms.
      expect(ms).toBeGreaterThanOrEqual(59);
    }
  } finally {
    await delay.stop();
  }
});

it('relays without delay when asked for none', async () => {
  const delay = await startNetworkDelay(upstreamEndpoint, 0);
  try {
    expect((await timedPost(delay.endpoint, 'pet')).text).toBe('echo:pet');
  } finally {
    await delay.stop();
  }
});
