#!/usr/bin/env node
'use strict';
// `npx petstore-keys` and `npm run keys --`: the key tool is TypeScript, run
// through tsx like the rest of the project (no build step). Both of tsx's
// hooks: the CommonJS one for require(), and the ESM one for the dynamic
// import() that loads the deployed-stage target (admin/keys-cli.ts), which
// Node's own resolver would look up without the `.ts` extension and not find.
require('tsx/esm/api').register();
require('tsx/cjs/api').register();
require('./keys-cli.ts').main();
