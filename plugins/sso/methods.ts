/** Sign-in methods, found by name: `plugins/sso/methods/<method>.ts`, default export a SignInMethod. */
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { namedPlugins } from '../../lib/named-plugins.ts';
import type { SignInMethod } from './method-types.ts';

const methods = namedPlugins<SignInMethod>(Path.join(Path.dirname(fileURLToPath(import.meta.url)), 'methods'), {
    what: 'a SignInMethod',
    isPlugin: (value): value is SignInMethod => typeof (value as SignInMethod | undefined)?.values === 'function',
});

export const methodNames = methods.names;
export const loadMethod = methods.load;
