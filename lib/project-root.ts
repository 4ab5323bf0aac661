import * as path from 'node:path';

/** The project root: definitions' `handlerEntry` paths are relative to it. */
export const projectRoot = path.resolve(__dirname, '..');
