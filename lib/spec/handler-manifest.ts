/**
 * What the build knows of the route files (scripts/handler-exports.ts): the names of the functions each exports,
 * so that the built server registers a route with a handler that imports its module on the first request rather
 * than at start. Running from the sources (tsx), or for a file the build did not settle, there is no entry and the
 * module is imported at start.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import { CODE_DIR, RUNNING_BUILT } from '../paths.ts';

/** Route file (relative to dist/, `/`-separated, `.js`) to the names of the functions it exports. */
export type HandlerManifest = Record<string, string[]>;

export const HANDLER_MANIFEST_FILE = 'handler-exports.json';

let manifest: HandlerManifest | undefined;

function builtManifest(): HandlerManifest {
    if (!manifest) {
        const file = Path.join(CODE_DIR, HANDLER_MANIFEST_FILE);
        manifest = RUNNING_BUILT && Fs.existsSync(file) ? (JSON.parse(Fs.readFileSync(file, 'utf8')) as HandlerManifest) : {};
    }

    return manifest;
}

/** The functions the build found exported by this module, or undefined when it must be imported to be known. */
export function knownExports(file: string): string[] | undefined {
    const key = Path.relative(CODE_DIR, file).split(Path.sep).join('/');
    return Object.hasOwn(builtManifest(), key) ? builtManifest()[key] : undefined;
}
