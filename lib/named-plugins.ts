/**
 * Plugins found by name: every `<name>.ts` in a folder (but the folder's own support files) is the plugin `<name>`,
 * and its default export is the plugin. Dropping a file in adds one; nothing lists them by hand.
 */
import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

const PLUGIN_NAME = /^[a-z][a-z0-9-]*$/;

export interface NamedPlugins<T> {
    names(): string[];
    /** The plugin of that name, or undefined when there is none; throws when its file exports no such plugin. */
    load(name: string): Promise<T | undefined>;
}

/**
 * `what` names the plugin in errors (`a SignInMethod`); `isPlugin` checks a default export; `supportFiles` are the
 * folder's files that are not plugins (their names without `.ts`).
 */
export function namedPlugins<T>(
    directory: string,
    options: { what: string; isPlugin: (value: unknown) => value is T; supportFiles?: string[] },
): NamedPlugins<T> {
    const support = new Set(options.supportFiles ?? []);
    const names = () =>
        Fs.readdirSync(directory)
            .filter((file) => file.endsWith('.ts'))
            .map((file) => file.slice(0, -3))
            .filter((name) => PLUGIN_NAME.test(name) && !support.has(name))
            .sort();
    return {
        names,
        async load(name) {
            if (!names().includes(name)) {
                return undefined;
            }

            const file = Path.join(directory, `${name}.ts`);
            const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
            if (!options.isPlugin(module.default)) {
                throw new Error(`${Path.relative(process.cwd(), file)} must export ${options.what} as its default`);
            }

            return module.default;
        },
    };
}
