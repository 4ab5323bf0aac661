import { registerHooks } from 'node:module';
import { join } from 'node:path';

/**
 * Imported first by the scripts that load the functions' handlers in process:
 * tsx runs this project's TypeScript as CommonJS, and middy 7 exports its entry
 * for `import` only, so `require('@middy/core')` finds no entry. Point at the
 * file, as jest.config.js does for the tests (Node 24 requires an ES module
 * that has no top-level await).
 */
registerHooks({
  resolve(specifier, context, nextResolve) {
    const middy = /^@middy\/([^/]+)$/.exec(specifier);
    if (!middy) return nextResolve(specifier, context);
    return nextResolve(join(__dirname, '..', 'node_modules', '@middy', middy[1] as string, 'index.js'), context);
  },
});
