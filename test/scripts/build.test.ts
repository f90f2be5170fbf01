import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import knexFactory from 'knex';
import YAML from 'yaml';

import { knexConfig } from '../../lib/database.ts';
import { HANDLER_MANIFEST_FILE, type HandlerManifest } from '../../lib/spec/handler-manifest.ts';
import { CHECKED_RECIPES_FILE, type CheckedRecipes, SHIPPED_RECIPES_DIR } from '../../plugins/deploy/domain/recipes/recipe-files.ts';
import { cachedValue, isCachedYaml, YAML_CACHE_DIR } from '../../lib/yaml-cache.ts';
import { ROOT_DIR } from '../../server.ts';
import { freePort, type RunningServer, temporaryDirectory, waitForHealth } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BUILT_SERVER = Path.join(ROOT_DIR, 'dist', 'server.js');

/** A DNS provider dropped into a folder of DNS_PROVIDERS_DIRS, as plain JavaScript; it says it was built in a file. */
const PROBE_PROVIDER = `import Fs from 'node:fs';
import Path from 'node:path';

export default function probe() {
    Fs.writeFileSync(Path.join(import.meta.dirname, 'built'), 'yes');
    return { name: 'probe', setAddress: async () => {}, removeAddress: async () => {}, lookupAddress: async () => [] };
}
`;

/** `npm start` as it runs the build: plain node, no tsx, configured by the environment only. */
function startBuiltServer(environment: Record<string, string>): RunningServer {
    let output = '';
    const child = spawn(process.execPath, [BUILT_SERVER], {
        cwd: ROOT_DIR,
        env: { PATH: process.env.PATH ?? '', ...environment },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
}

describe('npm run build', { timeout: 240_000 }, () => {
    let dataDir: string;
    let dropIns: string;
    let port: number;
    let server: RunningServer;

    // Building again (after an edit of the sources) compiles the whole project: minutes on a busy machine.
    before({ timeout: 600_000 }, async () => {
        // After npm ci (prepare) the build is there and fresh; after an edit of the sources it is built again.
        const build = spawnSync(process.execPath, ['--import', 'tsx', Path.join(ROOT_DIR, 'scripts', 'build.ts'), '--if-stale'], {
            cwd: ROOT_DIR,
            encoding: 'utf8',
        });
        expect(build.status, `${build.stdout}${build.stderr}`).to.equal(0);
        dataDir = temporaryDirectory();
        dropIns = temporaryDirectory('gatehouse-drop-ins-');
        Fs.writeFileSync(Path.join(dropIns, 'probe.js'), PROBE_PROVIDER);
        // TypeScript is not for the built server: a .ts file beside it is not a second file of that name.
        Fs.writeFileSync(Path.join(dropIns, 'probe.ts'), 'throw new Error("the built server imported a .ts drop-in");\n');
        port = await freePort();
        server = startBuiltServer({
            DATA_DIR: dataDir,
            PORT: String(port),
            HOST: '127.0.0.1',
            DNS_PROVIDER: 'probe',
            DNS_PROVIDERS_DIRS: dropIns,
        });
        await waitForHealth(port, server);
    });

    after(async () => {
        if (server && server.child.exitCode === null) {
            server.child.kill('SIGTERM');
            await server.exited;
        }

        Fs.rmSync(dataDir, { recursive: true, force: true });
        Fs.rmSync(dropIns, { recursive: true, force: true });
    });

    it('writes JavaScript only into dist/, and nothing read at run time', () => {
        expect(Fs.existsSync(Path.join(ROOT_DIR, 'dist', 'jobs', 'app-run.js'))).to.be.true();
        expect(Fs.existsSync(Path.join(ROOT_DIR, 'dist', 'lib', 'named-plugins.js'))).to.be.true();
        expect(Fs.readdirSync(Path.join(ROOT_DIR, 'dist', 'migrations')).every((file) => /\.js(\.map)?$/.test(file))).to.be.true();
        // Nothing read at run time is copied: dist/yaml holds values parsed from the YAML, keyed by its text (see below).
        for (const folder of ['specs', 'assets', 'recipes', 'web']) {
            expect(Fs.existsSync(Path.join(ROOT_DIR, 'dist', folder)), folder).to.be.false();
        }
    });

    it('holds the parsed value of the YAML files start reads (the deploy specs, the shipped recipes)', () => {
        for (const file of [Path.join('specs', 'deploy', 'apps.yaml'), Path.join('recipes', 'grafana.yaml')]) {
            const text = Fs.readFileSync(Path.join(ROOT_DIR, file), 'utf8');
            expect(cachedValue(YAML_CACHE_DIR, text), file).to.equal({ value: YAML.parse(text) });
            expect(isCachedYaml(text), file).to.be.true();
        }
    });

    it('lists the shipped recipe files it checked, and a start still checks any other', async () => {
        const checked = JSON.parse(Fs.readFileSync(Path.join(ROOT_DIR, 'dist', CHECKED_RECIPES_FILE), 'utf8')) as CheckedRecipes;
        const shipped = Fs.readdirSync(SHIPPED_RECIPES_DIR).filter((file) => file.endsWith('.yaml'));
        const hashes = shipped.map((file) =>
            createHash('sha256')
                .update(Fs.readFileSync(Path.join(SHIPPED_RECIPES_DIR, file)))
                .digest('hex'),
        );
        expect([...checked.files].sort()).to.equal(hashes.sort());

        // A file of the user's folders is one the build never saw: the start checks it, and stops on its mistake.
        const recipesDir = temporaryDirectory('gatehouse-recipes-');
        const stoppedDataDir = temporaryDirectory();
        try {
            const grafana = Fs.readFileSync(Path.join(SHIPPED_RECIPES_DIR, 'grafana.yaml'), 'utf8');
            Fs.writeFileSync(Path.join(recipesDir, 'unchecked.yaml'), `${grafana}bogus: 1\n`);
            const environment = { DATA_DIR: stoppedDataDir, PORT: String(await freePort()), HOST: '127.0.0.1', RECIPES_DIRS: recipesDir };
            const stopped = startBuiltServer(environment);
            expect(await stopped.exited).to.equal(2);
            expect(stopped.output()).to.contain('unchecked.yaml: (the recipe): must NOT have additional properties (bogus)');
        } finally {
            Fs.rmSync(recipesDir, { recursive: true, force: true });
            Fs.rmSync(stoppedDataDir, { recursive: true, force: true });
        }
    });

    it('lists the handlers each route file exports, as importing the file finds them', async () => {
        const manifest = JSON.parse(Fs.readFileSync(Path.join(ROOT_DIR, 'dist', HANDLER_MANIFEST_FILE), 'utf8')) as HandlerManifest;
        const routeFiles = Object.keys(manifest);
        expect(routeFiles).to.include(['plugins/git/routes/admin/users.js', 'plugins/deploy/routes/apps/handlers.js']);
        for (const file of routeFiles) {
            const source = Path.join(ROOT_DIR, file.replace(/\.js$/, '.ts'));
            const module = (await import(pathToFileURL(source).href)) as Record<string, unknown>;
            const functions = Object.keys(module).filter((name) => typeof module[name] === 'function');
            expect([...(manifest[file] ?? [])].sort(), file).to.equal(functions.sort());
        }
    });

    it('answers the git API and the deploy API, with the specs read from the project root', async () => {
        const licenses = await fetch(`http://127.0.0.1:${port}/api/v1/licenses`);
        expect(licenses.status).to.equal(200);
        expect(((await licenses.json()) as Array<{ key: string }>).some((license) => license.key === 'MIT')).to.be.true();

        const setup = await fetch(`http://127.0.0.1:${port}/api/setup/status`);
        expect(setup.status).to.equal(200);
        expect(await setup.json()).to.include({ needsSetup: true });
    });

    it('loads a .js drop-in from a folder a setting names, and leaves a .ts one alone', () => {
        expect(Fs.readFileSync(Path.join(dropIns, 'built'), 'utf8')).to.equal('yes');
    });

    it('runs its Bree jobs as plain JavaScript, and records migrations under their source names', async () => {
        await waitUntil('a cron task run at start by a worker', () => /cron task \w+: success/.test(server.output()), {
            timeoutMs: 60_000,
        });
        const knex = knexFactory(knexConfig(`sqlite:${Path.join(dataDir, 'gatehouse.sqlite')}`));
        try {
            const names = (await knex('knex_migrations').pluck('name')) as string[];
            expect(names.length).to.be.above(10);
            expect(names.every((name) => name.endsWith('.ts'))).to.be.true();
        } finally {
            await knex.destroy();
        }
    });
});
