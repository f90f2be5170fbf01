/**
 * Identity-provider adapters, found by name: `plugins/idp/providers/<kind>.ts`, default export an IdentityProviderKind.
 * Loading a kind adds its forward-auth contract to forward-auth.ts.
 */
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { namedPlugins } from '../../lib/named-plugins.ts';
import { addForwardAuth } from './forward-auth.ts';
import type { IdentityProviderKind } from './idp-types.ts';

const kinds = namedPlugins<IdentityProviderKind>(Path.join(Path.dirname(fileURLToPath(import.meta.url)), 'providers'), {
    what: 'an IdentityProviderKind',
    isPlugin: (value): value is IdentityProviderKind =>
        typeof (value as IdentityProviderKind | undefined)?.connect === 'function' &&
        typeof (value as IdentityProviderKind | undefined)?.forwardAuth === 'function',
});

export const idpKindNames = kinds.names;

export async function loadIdpKind(kind: string): Promise<IdentityProviderKind> {
    const loaded = await kinds.load(kind);
    if (!loaded) {
        throw new Error(`no identity-provider adapter ${kind} in plugins/idp/providers`);
    }

    addForwardAuth(kind, loaded.forwardAuth());
    return loaded;
}
