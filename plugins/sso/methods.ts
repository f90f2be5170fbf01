/** Sign-in methods, found by name: `plugins/sso/<method>.ts`, default export a SignInMethod. */
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { namedPlugins } from '../../lib/named-plugins.ts';
import type { SignInMethod } from './method-types.ts';

const methods = namedPlugins<SignInMethod>(Path.dirname(fileURLToPath(import.meta.url)), {
    what: 'a SignInMethod',
    isPlugin: (value): value is SignInMethod => typeof (value as SignInMethod | undefined)?.values === 'function',
    supportFiles: ['method-types', 'methods', 'placeholders', 'provider-work'],
});

export const methodNames = methods.names;
export const loadMethod = methods.load;
