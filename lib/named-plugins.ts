/**
 * Plugins found by name: every `<name>.ts` in a folder (but the folder's own support files) is the plugin `<name>`,
 * and its default export is the plugin. Dropping a file in adds one; nothing lists them by hand. A kind of plugin
 * may be looked for in more folders than the project's own (a setting's folders, say): a name is one file, so a
 * name found in two folders stops the listing, naming both files.
 *
 * From the sources (tsx) a file is `<name>.ts`, `.js` or `.mjs`; the build (dist/) finds its own folders' `<name>.js`,
 * and in a folder a setting adds `<name>.js` or `<name>.mjs` only, since plain Node cannot import TypeScript.
 */
import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import { CODE_DIR, DROP_IN_EXTENSIONS, RUNNING_BUILT } from './paths.ts';

const PLUGIN_NAME = /^[a-z][a-z0-9-]*$/;

/** The extensions of the plugin files in `directory`: the build's own folders hold only what tsc wrote. */
function pluginExtensions(directory: string): readonly string[] {
    const inBuild = RUNNING_BUILT && !Path.relative(CODE_DIR, Path.resolve(directory)).startsWith('..');
    return inBuild ? ['.js'] : DROP_IN_EXTENSIONS;
}

export interface NamedPlugins<T> {
    names(): string[];
    /** The plugin of that name, or undefined when there is none; throws when its file exports no such plugin. */
    load(name: string): Promise<T | undefined>;
}

/**
 * `directories`: the project's folder, then any others; `what` names the plugin in errors (`a SignInMethod`);
 * `isPlugin` checks a default export; `supportFiles` are the folders' files that are not plugins (their names
 * without the extension).
 */
export function namedPlugins<T>(
    directories: string | readonly string[],
    options: { what: string; isPlugin: (value: unknown) => value is T; supportFiles?: string[] },
): NamedPlugins<T> {
    const support = new Set(options.supportFiles ?? []);
    const files = (): Map<string, string> => {
        const found = new Map<string, string>();
        for (const directory of typeof directories === 'string' ? [directories] : directories) {
            const extensions = pluginExtensions(directory);
            for (const file of Fs.readdirSync(directory)) {
                const extension = Path.extname(file);
                if (!extensions.includes(extension)) {
                    continue;
                }

                const name = file.slice(0, -extension.length);
                if (!PLUGIN_NAME.test(name) || support.has(name)) {
                    continue;
                }

                const other = found.get(name);
                const path = Path.join(directory, file);
                if (other) {
                    throw new Error(`${options.what} named ${name} is both ${other} and ${path}: a name is one file`);
                }

                found.set(name, path);
            }
        }

        return found;
    };
    return {
        names: () => [...files().keys()].sort(),
        async load(name) {
            const file = files().get(name);
            if (!file) {
                return undefined;
            }

            const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
            if (!options.isPlugin(module.default)) {
                throw new Error(`${Path.relative(process.cwd(), file)} must export ${options.what} as its default`);
            }

            return module.default;
        },
    };
}
