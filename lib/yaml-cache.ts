/**
 * The project's own YAML files (specs/, recipes/) as the build parsed them. `npm run build` writes each file's value
 * as JSON to dist/yaml/<sha256 of its text>.json, and the server reads that instead of parsing the YAML again: the
 * deploy specs and the shipped recipes were about a third of the server's start. Keyed by the text itself, a file
 * edited after the build (or any file the build did not see, such as a recipe of RECIPES_DIRS) has no entry and is
 * parsed as YAML; so does every file of a build without the folder.
 */
import { createHash } from 'node:crypto';
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Path from 'node:path';

import type YAML from 'yaml';

import { ROOT_DIR } from './paths.ts';

/** Where the build writes the parsed files. */
export const YAML_CACHE_DIR = Path.join(ROOT_DIR, 'dist', 'yaml');
/** The folders of the project whose YAML files the build parses. */
export const CACHED_YAML_FOLDERS = ['specs', 'recipes'];
/**
 * Fields of those files' top-level maps that hold YAML text of their own, parsed at start too: a recipe's compose
 * template (checked to be YAML when the recipes are read).
 */
export const EMBEDDED_YAML_FIELDS = ['compose'];

let yaml: typeof YAML | undefined;

/** The yaml library, loaded by its first user: a start reads the build's JSON, and need not load it. */
export function yamlLibrary(): typeof YAML {
    yaml ??= createRequire(import.meta.url)('yaml') as typeof YAML;
    return yaml;
}

function cacheFile(folder: string, text: string): string {
    return Path.join(folder, `${createHash('sha256').update(text).digest('hex')}.json`);
}

/** YAML.parse's value for the text: read from the build's JSON when it parsed the same text, else parsed now. */
export function parseYaml(text: string, options?: YAML.ParseOptions & YAML.DocumentOptions & YAML.SchemaOptions): unknown {
    const cached = cachedValue(YAML_CACHE_DIR, text);
    return cached ? cached.value : yamlLibrary().parse(text, options);
}

/** Whether the build parsed the text (it is YAML), without reading what it made of it. */
export function isCachedYaml(text: string): boolean {
    return Fs.existsSync(cacheFile(YAML_CACHE_DIR, text));
}

/** The value the cache folder holds for the text, if it holds one. */
export function cachedValue(cacheDir: string, text: string): { value: unknown } | undefined {
    let json: string;
    try {
        json = Fs.readFileSync(cacheFile(cacheDir, text), 'utf8');
    } catch {
        return undefined;
    }

    return { value: JSON.parse(json) as unknown };
}

/**
 * Writes the parsed value of every YAML file under the folders into `cacheDir`, for parseYaml. A file that does not
 * parse, or whose value JSON cannot hold as it is (`.inf`, `.nan`), is left out: it is parsed at start, as before.
 */
export function writeYamlCache(rootDir: string, folders: string[], cacheDir: string, embeddedFields: string[] = []): number {
    Fs.mkdirSync(cacheDir, { recursive: true });
    let written = 0;
    for (const file of folders.flatMap((folder) => yamlFiles(Path.join(rootDir, folder)))) {
        const value = writeEntry(cacheDir, Fs.readFileSync(file, 'utf8'));
        if (value === undefined) continue;
        written += 1;
        for (const field of embeddedFields) {
            const embedded = (value as Record<string, unknown> | null)?.[field];
            if (typeof embedded === 'string') writeEntry(cacheDir, embedded);
        }
    }

    return written;
}

/** Writes the text's entry; answers its value, or undefined when it has none. */
function writeEntry(cacheDir: string, text: string): unknown {
    let value: unknown;
    try {
        // Quietly: a compose template's `image: {{IMAGE}}` is a map as a key, which YAML warns it writes as text.
        value = yamlLibrary().parse(text, { logLevel: 'error' });
    } catch {
        return undefined;
    }

    const json = JSON.stringify(value);
    if (json === undefined || !sameValue(JSON.parse(json), value)) return undefined;
    Fs.writeFileSync(cacheFile(cacheDir, text), json);
    return value;
}

function yamlFiles(folder: string): string[] {
    if (!Fs.existsSync(folder)) return [];
    return Fs.readdirSync(folder, { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.yaml') || name.endsWith('.yml'))
        .map((name) => Path.join(folder, name));
}

function sameValue(left: unknown, right: unknown): boolean {
    if (Object.is(left, right)) return true;
    if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
    if (Array.isArray(left) !== Array.isArray(right) || Object.getPrototypeOf(right) !== Object.getPrototypeOf(left)) return false;
    const leftKeys = Object.keys(left);
    const rightKeys = Object.keys(right);
    return (
        leftKeys.length === rightKeys.length &&
        leftKeys.every(
            (key, index) =>
                key === rightKeys[index] && sameValue((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]),
        )
    );
}
