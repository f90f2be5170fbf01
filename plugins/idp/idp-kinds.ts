/**
 * Identity-provider adapters, found by name: `plugins/idp/providers/<kind>.ts`, then the folders of IDP_KINDS_DIRS,
 * default export an IdentityProviderKind. Loading a kind adds its forward-auth contract to forward-auth.ts.
 */
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { namedPlugins, type NamedPlugins } from '../../lib/named-plugins.ts';
import { addForwardAuth } from './forward-auth.ts';
import type { IdentityProviderKind } from './idp-types.ts';

const PROVIDERS_DIR = Path.join(Path.dirname(fileURLToPath(import.meta.url)), 'providers');

function kindsIn(directory: string): NamedPlugins<IdentityProviderKind> {
    return namedPlugins<IdentityProviderKind>(directory, {
        what: 'an IdentityProviderKind',
        isPlugin: (value): value is IdentityProviderKind =>
            typeof (value as IdentityProviderKind | undefined)?.connect === 'function' &&
            typeof (value as IdentityProviderKind | undefined)?.forwardAuth === 'function',
    });
}

let folders: Array<NamedPlugins<IdentityProviderKind>> = [kindsIn(PROVIDERS_DIR)];

/** The folders of kinds beside plugins/idp/providers/ (IDP_KINDS_DIRS), set at start by the server and by each run's worker. */
export function useIdpKindFolders(directories: string[]): void {
    folders = [kindsIn(PROVIDERS_DIR), ...directories.map(kindsIn)];
}

/** The kinds there are, sorted; a name in two folders throws (a kind is one file), which stops the start. */
export function idpKindNames(): string[] {
    const names = folders.flatMap((folder) => folder.names());
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice) {
        throw new Error(
            `the identity-provider kind ${twice} is in two folders (plugins/idp/providers, IDP_KINDS_DIRS): a kind is one file`,
        );
    }

    return names.sort();
}

/** The kind of that name, or undefined when there is none; a file that exports no IdentityProviderKind throws, naming it. */
export async function findIdpKind(kind: string): Promise<IdentityProviderKind | undefined> {
    for (const folder of folders) {
        const loaded = await folder.load(kind);
        if (loaded) {
            addForwardAuth(kind, loaded.forwardAuth());
            return loaded;
        }
    }

    return undefined;
}

export async function loadIdpKind(kind: string): Promise<IdentityProviderKind> {
    const loaded = await findIdpKind(kind);
    if (!loaded) {
        throw new Error(`no identity-provider adapter ${kind} in plugins/idp/providers or IDP_KINDS_DIRS`);
    }

    return loaded;
}

/** Loads every kind, so that a bad file stops the start and every contract is known; answers their names. */
export async function loadIdpKinds(): Promise<string[]> {
    const names = idpKindNames();
    for (const name of names) {
        await loadIdpKind(name);
    }

    return names;
}
