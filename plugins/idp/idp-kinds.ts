/** Identity-provider adapters, found by name: `plugins/idp/providers/<kind>.ts`, default export an IdentityProviderKind. */
import Fs from 'node:fs';
import Path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import type { IdentityProviderKind } from './idp-types.ts';

const PROVIDERS_DIR = Path.join(Path.dirname(fileURLToPath(import.meta.url)), 'providers');
const KIND_NAME = /^[a-z][a-z0-9-]*$/;

export function idpKindNames(): string[] {
    return Fs.readdirSync(PROVIDERS_DIR)
        .filter((file) => file.endsWith('.ts'))
        .map((file) => file.slice(0, -3))
        .filter((name) => KIND_NAME.test(name))
        .sort();
}

export async function loadIdpKind(kind: string): Promise<IdentityProviderKind> {
    if (!idpKindNames().includes(kind)) {
        throw new Error(`no identity-provider adapter ${kind} in plugins/idp/providers`);
    }

    const module = (await import(pathToFileURL(Path.join(PROVIDERS_DIR, `${kind}.ts`)).href)) as { default?: IdentityProviderKind };
    if (!module.default || typeof module.default.connect !== 'function') {
        throw new Error(`plugins/idp/providers/${kind}.ts must export an IdentityProviderKind as its default`);
    }

    return module.default;
}
