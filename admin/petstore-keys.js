#!/usr/bin/env node
'use strict';
// `npx petstore-keys` and `npm run keys --`: the key tool is TypeScript, run
// through tsx like the rest of the project (no build step).
require('tsx/cjs/api').register();
require('./keys-cli.ts').main();
