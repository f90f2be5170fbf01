/**
 * Sign-in methods, found by name: `plugins/sso/methods/<method>.ts`, then the folders of SIGN_IN_METHODS_DIRS,
 * default export a SignInMethod.
 */
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type NamedPlugins, namedPlugins } from '../../lib/named-plugins.ts';
import type { SignInMethod } from './method-types.ts';

const METHODS_DIR = Path.join(Path.dirname(fileURLToPath(import.meta.url)), 'methods');

function methodsIn(directories: readonly string[]): NamedPlugins<SignInMethod> {
    return namedPlugins<SignInMethod>([METHODS_DIR, ...directories], {
        what: 'a SignInMethod',
        isPlugin: (value): value is SignInMethod => typeof (value as SignInMethod | undefined)?.values === 'function',
    });
}

let methods = methodsIn([]);

/** The folders of methods beside plugins/sso/methods/ (SIGN_IN_METHODS_DIRS), set at start by the server and by each run's worker. */
export function useMethodFolders(directories: readonly string[]): void {
    methods = methodsIn(directories);
}

/** The methods there are, sorted; a name in two folders throws, naming both files. */
export const methodNames = (): string[] => methods.names();
export const loadMethod = (name: string): Promise<SignInMethod | undefined> => methods.load(name);

/**
 * Uses the folders of SIGN_IN_METHODS_DIRS and loads their methods at start, so that a file there that is not a
 * method stops the start, naming it; the project's own are loaded when first used.
 */
export async function useAddedMethods(directories: readonly string[]): Promise<void> {
    useMethodFolders(directories);
    const own = new Set(methodsIn([]).names());
    await Promise.all(methodNames().flatMap((name) => (own.has(name) ? [] : [loadMethod(name)])));
}
