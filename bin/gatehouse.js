#!/usr/bin/env node
// Entry point of the `gatehouse` command: the build's CLI (dist/bin/cli.js, npm run build) when it is newer than
// the sources, else the TypeScript CLI through tsx, like the server from its sources. A coverage run
// (NODE_V8_COVERAGE, as `npm test -- --coverage` sets it) measures the sources, so it runs them.
import process from 'node:process';

import { isBuildFresh } from './build-state.js';

if (!process.env.NODE_V8_COVERAGE && isBuildFresh()) {
    await import('../dist/bin/cli.js');
} else {
    const { register } = await import('tsx/esm/api');
    register();
    await import('./cli.ts');
}
