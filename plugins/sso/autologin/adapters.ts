/** Auto-login adapters, found by name: `plugins/sso/autologin/<adapter>.ts`, default export an AutoLoginAdapter. */
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { namedPlugins } from '../../../lib/named-plugins.ts';
import type { AutoLoginAdapter } from './adapter-types.ts';

const adapters = namedPlugins<AutoLoginAdapter>(Path.dirname(fileURLToPath(import.meta.url)), {
    what: 'an AutoLoginAdapter',
    isPlugin: (value): value is AutoLoginAdapter => typeof (value as AutoLoginAdapter | undefined)?.signIn === 'function',
    supportFiles: ['adapter-types', 'adapters'],
});

export const adapterNames = adapters.names;
export const loadAdapter = adapters.load;
