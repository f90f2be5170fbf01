/**
 * Auto-login adapters, found by name: `plugins/sso/autologin/adapters/<adapter>.ts`, or `<adapter>.ts` in a folder of
 * AUTOLOGIN_ADAPTERS_DIRS, default export an AutoLoginAdapter.
 */
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type NamedPlugins, namedPlugins } from '../../../lib/named-plugins.ts';
import type { AutoLoginAdapter } from './adapter-types.ts';

const ADAPTERS_DIR = Path.join(Path.dirname(fileURLToPath(import.meta.url)), 'adapters');

/** The adapters of this folder and of `folders` (the configuration's AUTOLOGIN_ADAPTERS_DIRS). */
export function autoLoginAdapters(folders: readonly string[] = []): NamedPlugins<AutoLoginAdapter> {
    return namedPlugins<AutoLoginAdapter>([ADAPTERS_DIR, ...folders], {
        what: 'an AutoLoginAdapter',
        isPlugin: (value): value is AutoLoginAdapter => typeof (value as AutoLoginAdapter | undefined)?.signIn === 'function',
    });
}

/**
 * Loads the adapters of `folders` (AUTOLOGIN_ADAPTERS_DIRS) at start, so that a file there that is not an adapter
 * stops the start, naming it; this folder's own are loaded when first used.
 */
export async function loadAddedAdapters(folders: readonly string[]): Promise<void> {
    const all = autoLoginAdapters(folders);
    const own = new Set(autoLoginAdapters().names());
    await Promise.all(all.names().flatMap((name) => (own.has(name) ? [] : [all.load(name)])));
}
