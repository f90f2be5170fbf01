/** Sign-in methods, found by name: `plugins/sso/<method>.ts`, default export a SignInMethod. */
import Fs from 'node:fs';
import Path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import type { SignInMethod } from './method-types.ts';

const METHODS_DIR = Path.dirname(fileURLToPath(import.meta.url));
const NOT_METHODS = new Set(['method-types', 'methods', 'placeholders']);
const METHOD_NAME = /^[a-z][a-z0-9-]*$/;

export function methodNames(): string[] {
    return Fs.readdirSync(METHODS_DIR)
        .filter((file) => file.endsWith('.ts'))
        .map((file) => file.slice(0, -3))
        .filter((name) => METHOD_NAME.test(name) && !NOT_METHODS.has(name))
        .sort();
}

export async function loadMethod(name: string): Promise<SignInMethod | undefined> {
    if (!methodNames().includes(name)) {
        return undefined;
    }

    const module = (await import(pathToFileURL(Path.join(METHODS_DIR, `${name}.ts`)).href)) as { default?: SignInMethod };
    if (!module.default || typeof module.default.values !== 'function') {
        throw new Error(`plugins/sso/${name}.ts must export a SignInMethod as its default`);
    }

    return module.default;
}
