/**
 * Builds the web UI into web/dist with Vite. `--if-missing` builds only when there is no build yet (npm start);
 * without it, it always builds (npm run build:web, and `prepare` on npm ci). An install without the
 * development dependencies (no Vite) skips the build with a message instead of failing the install.
 *
 * Vite writes into a folder of its own first; the new assets are then added to web/dist and index.html replaced
 * last, in one rename. A browser that loaded the previous index.html (an open tab, while a server keeps running)
 * still finds the previous build's assets, which stay one build longer.
 */
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Path from 'node:path';

const webDir = import.meta.dirname;
const distDir = Path.join(webDir, 'dist');
const builtIndex = Path.join(distDir, 'index.html');
/** The assets of the latest build, so that the next one knows which earlier ones may go. */
const ASSETS_LIST = '.assets.json';
/** When the latest build started (ms): files of web/ changed after it are not in it (the browser tests rebuild then). */
const BUILD_STARTED = '.build-started';

function viteCli(): string | undefined {
    try {
        const require = createRequire(import.meta.url);
        return Path.join(Path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
    } catch {
        return undefined;
    }
}

function readAssetsList(): string[] {
    try {
        return JSON.parse(Fs.readFileSync(Path.join(distDir, ASSETS_LIST), 'utf8')) as string[];
    } catch {
        return [];
    }
}

/** Moves a finished build into web/dist: new assets first, then the other files, index.html last. */
function install(stagingDir: string): void {
    const kept = new Set(readAssetsList());
    const fresh = Fs.readdirSync(Path.join(stagingDir, 'assets'));
    Fs.mkdirSync(Path.join(distDir, 'assets'), { recursive: true });
    for (const file of fresh) {
        Fs.renameSync(Path.join(stagingDir, 'assets', file), Path.join(distDir, 'assets', file));
    }

    const others = Fs.readdirSync(stagingDir).filter((file) => file !== 'assets' && file !== 'index.html');
    for (const file of [...others, 'index.html']) {
        Fs.rmSync(Path.join(distDir, file), { recursive: true, force: true });
        Fs.renameSync(Path.join(stagingDir, file), Path.join(distDir, file));
    }

    for (const file of Fs.readdirSync(Path.join(distDir, 'assets'))) {
        if (!fresh.includes(file) && !kept.has(file)) {
            Fs.rmSync(Path.join(distDir, 'assets', file), { force: true });
        }
    }

    Fs.writeFileSync(Path.join(distDir, ASSETS_LIST), `${JSON.stringify(fresh)}\n`);
}

function main(): number {
    if (process.argv.includes('--if-missing') && Fs.existsSync(builtIndex)) {
        return 0;
    }

    const cli = viteCli();
    if (!cli) {
        console.warn('web UI not built: Vite is not installed (install the development dependencies, then run npm run build:web)');
        return 0;
    }

    const stagingDir = Path.join(webDir, `.dist-${process.pid}`);
    const startedAt = Date.now();
    try {
        const result = spawnSync(
            process.execPath,
            [cli, 'build', '--config', Path.join(webDir, 'vite.config.ts'), '--outDir', stagingDir, '--emptyOutDir', '--logLevel', 'warn'],
            { cwd: webDir, stdio: 'inherit' },
        );
        if (result.status !== 0) {
            return result.status ?? 1;
        }

        install(stagingDir);
        Fs.writeFileSync(Path.join(distDir, BUILD_STARTED), `${startedAt}\n`);
        return 0;
    } finally {
        Fs.rmSync(stagingDir, { recursive: true, force: true });
    }
}

process.exitCode = main();
