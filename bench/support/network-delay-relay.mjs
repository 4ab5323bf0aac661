// A TCP relay that holds every chunk for half a round trip in each direction,
// so that each request to the upstream waits one network round trip of
// `roundTripMs` on top of the upstream's own time: the in-region network that
// DynamoDB Local on loopback lacks. It runs in a process of its own, so that
// its work never lands on the event loop being measured.
// Usage: node network-delay-relay.mjs <upstream port> <round trip ms>; prints its port.
import { createConnection, createServer } from 'node:net';

const [upstreamPort, roundTripMs] = process.argv.slice(2).map(Number);
if (!upstreamPort || !(roundTripMs >= 0)) throw new Error('usage: node network-delay-relay.mjs <upstream port> <round trip ms>');
const oneWayMs = roundTripMs / 2;

/** Pipes `from` into `to`, each chunk `oneWayMs` late and in order (timers of one duration fire in the order set). */
function delayed(from, to) {
  from.on('data', (chunk) => {
    if (oneWayMs === 0) to.write(chunk);
    else setTimeout(() => to.writable && to.write(chunk), oneWayMs);
  });
  from.on('end', () => setTimeout(() => to.end(), oneWayMs));
  from.on('error', () => to.destroy());
}

const server = createServer((client) => {
  client.setNoDelay(true);
  const upstream = createConnection({ host: '127.0.0.1', port: upstreamPort });
  upstream.setNoDelay(true);
  delayed(client, upstream);
  delayed(upstream, client);
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
// Ends with the bench: its parent closes stdin.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
