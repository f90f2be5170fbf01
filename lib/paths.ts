/**
 * Where the server's files are, whether it runs from its TypeScript sources (tsx: `npm run dev`, the tests) or
 * as the JavaScript `npm run build` writes to `dist/` (`npm start`). Code is found beside the running code
 * (`dist/jobs/` or `jobs/`), with the running code's extension; what is read at run time but not compiled
 * (specs/, assets/, recipes/, the web UI's build) is read from the project's root, never copied.
 */
import Path from 'node:path';

/** Whether this process runs the build in dist/ rather than the sources through tsx. */
export const RUNNING_BUILT = !import.meta.url.endsWith('.ts');

/** The extension of the project's own modules as they run: `.ts` from the sources, `.js` from dist/. */
export const CODE_EXTENSION = RUNNING_BUILT ? '.js' : '.ts';

/** The extensions of a drop-in file in a folder a setting names: the built server cannot import TypeScript. */
export const DROP_IN_EXTENSIONS: readonly string[] = RUNNING_BUILT ? ['.js', '.mjs'] : ['.ts', '.js', '.mjs'];

/** The folder the running code sits in: the project's root, or dist/ when built. */
export const CODE_DIR = Path.resolve(import.meta.dirname, '..');

/** The project's root (package.json, specs/, assets/, recipes/, web/dist/), from the sources and from dist/ alike. */
export const ROOT_DIR = RUNNING_BUILT ? Path.dirname(CODE_DIR) : CODE_DIR;

/** A module of the project by its path without extension, as it runs: `codeFile(JOBS_DIR, 'app-run')`. */
export function codeFile(...parts: string[]): string {
    return `${Path.join(...parts)}${CODE_EXTENSION}`;
}
