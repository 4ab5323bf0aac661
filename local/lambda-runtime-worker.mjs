/**
 * One function's execution environment on this machine, as Lambda's Node.js
 * runtime runs it: plain `node` (the pinned Node.js 24, no TypeScript loader),
 * the function's environment only, and the handler found the way Lambda finds
 * it: `_HANDLER` is `<module>.<export>` (`index.handler`), the module is a file
 * of LAMBDA_TASK_ROOT, and an `.mjs` file is loaded as an ES module with
 * import() ("Building Lambda functions with Node.js", "Designating a function
 * handler as an ES module": https://docs.aws.amazon.com/lambda/latest/dg/lambda-nodejs.html;
 * "Define Lambda function handler in Node.js":
 * https://docs.aws.amazon.com/lambda/latest/dg/nodejs-handler.html).
 *
 * Started by local/lambda-runtime.ts with an IPC channel: it sends its output as `log` messages, answers `ready`
 * with the file it loaded and that file's SHA-256 (what the end-to-end tests
 * check), then one `result` or `error` per `invoke`. Nothing of this reaches a
 * response: the gateway sees only what the handler returned.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const taskRoot = process.env.LAMBDA_TASK_ROOT;
const [moduleName, exportName] = splitHandler(process.env._HANDLER ?? '');

function splitHandler(handler) {
  const dot = handler.lastIndexOf('.');
  return dot > 0 ? [handler.slice(0, dot), handler.slice(dot + 1)] : [handler, 'handler'];
}

/**
 * A test's clock: Date.now() (all the functions' clock reads; functions/runtime/clock.ts)
 * answers the instant the local gateway's clock gave for the invocation. Unset
 * (npm start), the real clock runs.
 */
/**
 * What the function writes to stdout and stderr (its log lines, which Lambda
 * sends to CloudWatch Logs) goes to the local API's process over the same
 * channel as the results, so that each invocation's lines arrive before its
 * result, in order.
 */
for (const stream of ['stdout', 'stderr']) {
  process[stream].write = (chunk, encoding, callback) => {
    process.send({ type: 'log', stream, text: typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8') });
    (typeof encoding === 'function' ? encoding : callback)?.();
    return true;
  };
}

const realNow = Date.now;
let clockNow;
Date.now = () => clockNow ?? realNow();

const file = ['.js', '.mjs', '.cjs'].map((extension) => join(taskRoot, `${moduleName}${extension}`)).find((path) => existsSync(path));
if (!file) throw new Error(`Cannot find module ${moduleName} in ${taskRoot} (handler ${process.env._HANDLER})`);
const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
const handler = (await import(pathToFileURL(file).href))[exportName];
if (typeof handler !== 'function') throw new Error(`${file} does not export a function named ${exportName}`);

process.send({ type: 'ready', file, sha256 });
// The local API closed (or its process died): this environment goes with it.
process.on('disconnect', () => process.exit(0));
process.on('message', (message) => {
  if (message?.type === 'invoke') void invoke(message);
});

async function invoke({ id, event, remainingMs, clock }) {
  if (clock !== undefined) clockNow = clock;
  const started = performance.now();
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:000000000000:function:${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: event?.requestContext?.requestId ?? `local-${id}`,
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, Math.round(remainingMs - (performance.now() - started))),
  };
  try {
    const result = await handler(event, context);
    process.send({ type: 'result', id, result });
  } catch (error) {
    process.send({ type: 'error', id, error: { name: error?.name ?? 'Error', message: error?.message ?? String(error) } });
  }
}
