// One cold start: a fresh Node.js process loads a Lambda bundle the way the
// Lambda runtime does (import() for ESM, require() for CommonJS), which runs
// all of its module-level code, and reports how long that took (wall clock,
// and CPU time of the process, which a busy machine disturbs less).
// Usage: node cold-init-probe.mjs <bundle file>
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
if (!file) throw new Error('usage: node cold-init-probe.mjs <bundle file>');
const bootMs = performance.now();
const cpuBefore = process.cpuUsage();
const start = performance.now();
const loaded =
  /\.c?js$/.test(file) && !file.endsWith('.mjs') ? createRequire(import.meta.url)(file) : await import(pathToFileURL(file).href);
const initMs = performance.now() - start;
const cpu = process.cpuUsage(cpuBefore);
if (typeof loaded.handler !== 'function') throw new Error(`${file} exports no handler function`);
process.stdout.write(
  `${JSON.stringify({ initMs, cpuMs: (cpu.user + cpu.system) / 1000, bootMs, heapUsedBytes: process.memoryUsage().heapUsed })}\n`,
);
