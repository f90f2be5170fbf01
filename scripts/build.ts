/**
 * Builds the server into dist/ with tsc (tsconfig.build.json): server.ts, lib/, plugins/, jobs/, migrations/ and
 * bin/ as JavaScript, their `.ts` import specifiers rewritten to `.js`. Nothing else is copied: the built server
 * reads specs/, assets/, recipes/ and web/dist/ from the project's root (lib/paths.ts); what the build adds is the
 * parsed value of their YAML files, as JSON in dist/yaml/ (lib/yaml-cache.ts), which start reads instead of parsing,
 * the handler names each route file exports (dist/handler-exports.json), so that start need not import them, and the
 * shipped recipe files that pass their checks (dist/checked-recipes.json), so that start need not check them again.
 *
 * `npm run build` (and `prepare`, on npm ci) always builds; `--if-stale` (npm start) builds only when there is no
 * build, or a source file or folder changed after it. tsc writes into a folder of its own, which then replaces
 * dist/ in two renames, so a removed source file leaves nothing behind and a failed build leaves the previous one.
 * An install without the development dependencies (no TypeScript) skips the build with a message.
 */
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Path from 'node:path';

import { BUILD_STAMP, DIST_DIR, isBuildFresh, isBuilt } from '../bin/build-state.js';
import { HANDLER_MANIFEST_FILE } from '../lib/spec/handler-manifest.ts';
import { CACHED_YAML_FOLDERS, EMBEDDED_YAML_FIELDS, writeYamlCache } from '../lib/yaml-cache.ts';

const ROOT_DIR = Path.resolve(import.meta.dirname, '..');

function typescriptCli(): string | undefined {
    try {
        const require = createRequire(import.meta.url);
        return Path.join(Path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
    } catch {
        return undefined;
    }
}

async function main(): Promise<number> {
    const ifStale = process.argv.includes('--if-stale');
    if (ifStale && isBuildFresh()) {
        return 0;
    }

    const cli = typescriptCli();
    if (!cli) {
        // Without the development dependencies a build that is there serves, stale or not; none at all is a failure to start.
        console.warn('server not built: TypeScript is not installed (install the development dependencies, then run npm run build)');
        return ifStale && !isBuilt() ? 1 : 0;
    }

    const staging = Path.join(ROOT_DIR, `.dist-${process.pid}`);
    const previous = Path.join(ROOT_DIR, `.dist-old-${process.pid}`);
    const startedAt = Date.now();
    try {
        const result = spawnSync(process.execPath, [cli, '-p', Path.join(ROOT_DIR, 'tsconfig.build.json'), '--outDir', staging], {
            cwd: ROOT_DIR,
            stdio: 'inherit',
        });
        if (result.status !== 0) {
            return result.status ?? 1;
        }

        writeYamlCache(ROOT_DIR, CACHED_YAML_FOLDERS, Path.join(staging, 'yaml'), EMBEDDED_YAML_FIELDS);
        // TypeScript's parser reads the route files' exports: loaded here, as the build may find no TypeScript.
        const { handlerManifest } = await import('./handler-exports.ts');
        Fs.writeFileSync(Path.join(staging, HANDLER_MANIFEST_FILE), `${JSON.stringify(handlerManifest(ROOT_DIR))}\n`);
        const { CHECKED_RECIPES_FILE, checkedRecipes } = await import('../plugins/deploy/domain/recipes/recipe-files.ts');
        Fs.writeFileSync(Path.join(staging, CHECKED_RECIPES_FILE), `${JSON.stringify(checkedRecipes())}\n`);
        Fs.writeFileSync(Path.join(staging, Path.basename(BUILD_STAMP)), `${startedAt}\n`);
        if (Fs.existsSync(DIST_DIR)) Fs.renameSync(DIST_DIR, previous);
        Fs.renameSync(staging, DIST_DIR);
        return 0;
    } finally {
        Fs.rmSync(staging, { recursive: true, force: true });
        Fs.rmSync(previous, { recursive: true, force: true });
    }
}

process.exitCode = await main();
