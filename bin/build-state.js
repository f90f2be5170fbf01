// Whether dist/ holds a finished build of the server that is newer than its sources: plain JavaScript, so that the
// CLI can ask before it loads anything (bin/gatehouse.js), and scripts/build.ts before it builds.
import Fs from 'node:fs';
import Path from 'node:path';

const ROOT_DIR = Path.resolve(import.meta.dirname, '..');
export const DIST_DIR = Path.join(ROOT_DIR, 'dist');
/** When the build started (ms since the epoch), written last: a dist/ without it is not a finished build. */
export const BUILD_STAMP = Path.join(DIST_DIR, '.built');
// The build's own scripts count: what they write into dist/ (the YAML cache, the handler manifest) changes with them.
const SOURCES = [
    'server.ts',
    'lib',
    'plugins',
    'jobs',
    'migrations',
    'bin',
    'tsconfig.json',
    'tsconfig.build.json',
    'scripts/build.ts',
    'scripts/handler-exports.ts',
];

/** The latest change among the sources: files, and folders (a file added or removed). */
function newestSource() {
    let newest = 0;
    const visit = (path) => {
        const stat = Fs.statSync(path, { throwIfNoEntry: false });
        if (!stat) return;
        newest = Math.max(newest, stat.mtimeMs);
        if (stat.isDirectory()) {
            for (const entry of Fs.readdirSync(path)) visit(Path.join(path, entry));
        }
    };
    for (const source of SOURCES) visit(Path.join(ROOT_DIR, source));
    return newest;
}

export function isBuilt() {
    return Fs.existsSync(BUILD_STAMP);
}

/** Built, and no source changed since the build started. */
export function isBuildFresh() {
    const startedAt = isBuilt() ? Number(Fs.readFileSync(BUILD_STAMP, 'utf8')) : Number.NaN;
    return Number.isFinite(startedAt) && newestSource() < startedAt;
}
