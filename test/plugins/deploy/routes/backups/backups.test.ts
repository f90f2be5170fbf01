// needs: docker
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import { backupsOf, backupTestServer, deployWithVolume, inApp, removeVolumes, resticFor } from '../../../../support/backup-app.ts';
import { buildWebImage, docker, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const PASSWORD = `backup-password-${SUFFIX}`;

const resticCheck = (repository: string, password: string) => resticFor(repository, password, ['check']);

function spawnChecked(command: string, args: string[]): void {
    const result = spawnSync(command, args, { encoding: 'utf8' });
    expect(result.status, `${command} ${args.join(' ')}: ${result.stderr}`).to.equal(0);
}

describe('deploy manager: backups and restore', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let image: string;
    const apps: string[] = [];
    const logged: string[] = [];
    let recipesDir: string;

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/backup-web:${SUFFIX}`, '<h1>backed up</h1>\n', true);
        // The image's recipe says how a backup dumps the app's data, and how a restore feeds it back.
        recipesDir = temporaryDirectory('gatehouse-backup-recipes-');
        const recipe = [
            `image: ${image.slice(0, image.lastIndexOf(':'))}`,
            'title: Backed-up web',
            'method: none',
            'level: documented',
            'sources: [https://example.org/backup-web]',
            'backup:',
            '  dump:',
            '    service: web',
            '    command: cat /data/notes/note.txt || echo no note',
            // A dump saying "poison" fails its restore: a failed restore, to be rolled back.
            '    restore: cat > /data/from-dump.txt && ! grep -q poison /data/from-dump.txt',
        ];
        Fs.writeFileSync(Path.join(recipesDir, `backup-web-${SUFFIX}.yaml`), `${recipe.join('\n')}\n`);
        server = await backupTestServer(services, { BACKUP_PASSWORD: PASSWORD, RECIPES_DIRS: recipesDir });
        server.context.server.events.on('log', (event) => logged.push(`${event.tags.join(',')} ${JSON.stringify(event.data)}`));
        server.context.server.events.on('request', (_request, event) =>
            logged.push(`${event.tags.join(',')} ${JSON.stringify(event.data)}`),
        );
    });

    after(async () => {
        await removeProjects(apps, [image]);
        removeVolumes(apps);
        await server?.context.cleanup();
        services?.stop();
        Fs.rmSync(recipesDir, { recursive: true, force: true });
    });

    const listOf = (name: string, browser = server.admin) => backupsOf(browser, name);

    const app = `keep-${SUFFIX}`;

    /**
     * The app `keep` deployed, backed up, its data destroyed and restored: made by whichever test first needs it (each
     * passes alone, in any order), and what it saw is kept for the test of it. The tests that add or remove backups do
     * it on apps of their own, so `keep` always holds these two backups.
     */
    const backUpAndRestore = async () => {
        apps.push(app);
        await deployWithVolume(server, app, image, { TOKEN: `token-${SUFFIX}` });
        inApp(app, 'mkdir -p /data/notes && echo "kept $HOSTNAME" > /data/notes/note.txt && echo 1 > /data/.hidden');
        inApp(app, 'chown 1234:2345 /data/notes/note.txt && chmod 640 /data/notes/note.txt');
        const written = inApp(app, 'cat /data/notes/note.txt');

        const backedUp = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups`));
        const [backup] = await listOf(app);

        // The data destroyed, a stray file added, the compose file's folder changed.
        inApp(app, 'rm -rf /data/notes /data/.hidden && echo stray > /data/stray.txt');
        const appDir = Path.join(server.context.config.apps.appsDir, app);
        Fs.writeFileSync(Path.join(appDir, 'secrets.env'), 'TOKEN=overwritten\n');

        const restored = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups/${backup?.id}/restore`));
        const found = {
            note: inApp(app, 'cat /data/notes/note.txt'),
            owner: inApp(app, 'stat -c "%u:%g %a" /data/notes/note.txt'),
            hidden: inApp(app, 'cat /data/.hidden'),
            data: inApp(app, 'ls /data'),
            fromDump: inApp(app, 'cat /data/from-dump.txt'),
            secrets: Fs.readFileSync(Path.join(appDir, 'secrets.env'), 'utf8'),
            running: docker('inspect', '-f', '{{.State.Running}}', `${app}-web-1`).trim(),
        };
        const after = await listOf(app);
        const state = (await server.admin.get(`/api/apps/${app}`)).body as { app: { state: string } };
        return { written, backedUp, backup, restored, found, after, state };
    };
    let restoredOnce: ReturnType<typeof backUpAndRestore> | undefined;
    const haveRestored = () => (restoredOnce ??= backUpAndRestore());

    it("backs up the app's folder, site and volume, and a restore brings destroyed data back", async () => {
        const { written, backedUp, backup, restored, found, after, state } = await haveRestored();
        expect(backedUp.state, backedUp.text).to.equal('succeeded');
        expect(backedUp.text).to.contain('Paused 1 container(s)');
        expect(backup?.reason).to.equal('manual');
        expect(backup?.holds).to.equal({ folder: true, site: true, volumes: [`${app}_data`], dumps: ['web'] });
        expect(backedUp.text).to.contain('Dumped web');
        // The engine keeps the volume in a folder of this host: restic reads it there, into a snapshot of its own.
        expect(backedUp.text).to.contain(`Backed up volume ${app}_data from /`);
        expect(backup?.size ?? 0).to.be.above(0);
        expect(Date.parse(backup?.time ?? '')).to.be.above(Date.now() - 600_000);

        expect(restored.state, restored.text).to.equal('succeeded');
        expect(found.note).to.equal(written);
        expect(found.hidden).to.equal('1');
        expect(found.owner).to.equal('1234:2345 640');
        // The volume holds what it held, and the dump was fed to the recipe's restore command once the app ran.
        expect(found.data).to.equal('from-dump.txt\nnotes');
        expect(found.fromDump).to.equal(written);
        expect(found.secrets).to.contain(`token-${SUFFIX}`);
        expect(found.running).to.equal('true');

        // What the restore replaced was kept as a backup of its own.
        expect(after.map((one) => one.reason)).to.equal(['before restore', 'manual']);
        expect(state.app.state).to.equal('running');
    });

    it('leaves a restic repository that restic check finds sound', async () => {
        await haveRestored();
        const checked = resticCheck(server.context.config.backups.repository, PASSWORD);
        expect(checked.status, `${checked.stdout}${checked.stderr}`).to.equal(0);
        expect(checked.stdout).to.contain('no errors were found');
    });

    it('lets a viewer list the backups but not make, restore or delete one', async () => {
        await haveRestored();
        const viewer = await server.signInAs('viewer');
        expect((await listOf(app, viewer)).length).to.equal(2);
        const [backup] = await listOf(app);
        expect((await viewer.post(`/api/apps/${app}/backups`)).status).to.equal(403);
        expect((await viewer.post(`/api/apps/${app}/backups/${backup?.id}/restore`)).status).to.equal(403);
        expect((await viewer.delete(`/api/apps/${app}/backups/${backup?.id}`)).status).to.equal(403);
        expect((await listOf(app)).length).to.equal(2);
    });

    it('answers bad input with a clear 4xx in the deploy API error shape', async () => {
        await haveRestored();
        const notNumber = await server.admin.post(`/api/apps/${app}/backups/abc/restore`);
        expect(notNumber.status).to.equal(422);
        expect((notNumber.body as { error: string }).error).to.contain('id');
        const unknown = await server.admin.delete(`/api/apps/${app}/backups/999999`);
        expect(unknown.status).to.equal(404);
        expect((unknown.body as { error: string }).error).to.contain('no backup 999999');
        expect((await server.admin.get(`/api/apps/nothing-${SUFFIX}/backups`)).status).to.equal(404);

        const draft = `draft-${SUFFIX}`;
        expect((await server.admin.post('/api/apps', { name: draft, image: 'busybox', tag: 'latest' })).status).to.equal(201);
        const refused = await server.admin.post(`/api/apps/${draft}/backups`);
        expect(refused.status).to.equal(422);
        expect((refused.body as { error: string }).error).to.contain('has not been deployed yet');
    });

    it('deletes a backup from the list and from the repository', async () => {
        // An app of its own with two backups: `keep`'s stay as they are for the other tests.
        const dropped = `drop-${SUFFIX}`;
        apps.push(dropped);
        await deployWithVolume(server, dropped, image);
        inApp(dropped, 'echo kept > /data/kept.txt');
        for (const _ of [1, 2]) {
            const backedUp = await runToEnd(server.admin, await server.admin.post(`/api/apps/${dropped}/backups`));
            expect(backedUp.state, backedUp.text).to.equal('succeeded');
        }

        const [newest, oldest] = await listOf(dropped);
        const removed = await server.admin.delete(`/api/apps/${dropped}/backups/${newest?.id}`);
        expect(removed.status, removed.text).to.equal(204);
        expect((await listOf(dropped)).map((one) => one.id)).to.equal([oldest?.id]);
        // The repository is shared with the other tests' apps: the snapshots counted are this app's (Gatehouse tags them).
        // Each backup is its own snapshot and its volume's.
        for (const tag of [`app:${dropped}`, `volume-of:${dropped}`]) {
            const snapshots = resticFor(server.context.config.backups.repository, PASSWORD, ['snapshots', '--json', '--tag', tag]);
            expect(snapshots.status, snapshots.stderr).to.equal(0);
            expect((JSON.parse(snapshots.stdout) as unknown[]).length, tag).to.equal(1);
        }

        expect(resticCheck(server.context.config.backups.repository, PASSWORD).status).to.equal(0);
    });

    it('reads and restores through the engine a volume whose folder on this host Gatehouse cannot write', async () => {
        // An app of its own: its volume's folder made immutable, as a folder Gatehouse may not write is to it.
        const sealed = `sealed-${SUFFIX}`;
        apps.push(sealed);
        await deployWithVolume(server, sealed, image);
        inApp(sealed, 'echo "through the engine" > /data/kept.txt && chown 1234:2345 /data/kept.txt');
        const folder = docker('volume', 'inspect', '-f', '{{.Mountpoint}}', `${sealed}_data`).trim();
        let backedUp: Awaited<ReturnType<typeof runToEnd>>;
        spawnChecked('chattr', ['+i', folder]);
        try {
            backedUp = await runToEnd(server.admin, await server.admin.post(`/api/apps/${sealed}/backups`));
        } finally {
            spawnChecked('chattr', ['-i', folder]);
        }

        expect(backedUp.state, backedUp.text).to.equal('succeeded');
        expect(backedUp.text).to.contain(`Read volume ${sealed}_data`);
        expect(backedUp.text).to.not.contain('Backed up volume');
        const [backup] = await listOf(sealed);
        inApp(sealed, 'rm /data/kept.txt && echo stray > /data/stray.txt');
        const restored = await runToEnd(server.admin, await server.admin.post(`/api/apps/${sealed}/backups/${backup?.id}/restore`));
        expect(restored.state, restored.text).to.equal('succeeded');
        // The stray file gone; from-dump.txt is the recipe's restore command's.
        expect(inApp(sealed, 'ls /data')).to.equal('from-dump.txt\nkept.txt');
        expect(inApp(sealed, 'cat /data/kept.txt')).to.equal('through the engine');
        expect(inApp(sealed, 'stat -c "%u:%g" /data/kept.txt')).to.equal('1234:2345');
    });

    it('never shows the repository password in a response, a run line or a log line', async () => {
        await haveRestored();
        const runs = (await server.admin.get(`/api/apps/${app}/runs`)).body as { runs: Array<{ id: number }> };
        const texts = [JSON.stringify(await listOf(app)), JSON.stringify(runs), logged.join('\n')];
        for (const run of runs.runs) {
            texts.push((await server.admin.get(`/api/runs/${run.id}`)).text);
        }

        texts.push((await server.admin.get('/api/admin/audit')).text);
        for (const text of texts) {
            expect(text).to.not.contain(PASSWORD);
        }
    });

    it('puts back what was there when a restore fails, and ends rolled back with the app running (leftovers of killed runs removed)', async () => {
        // An app of its own, whose data the test changes and whose backups it adds to: `keep`'s stay as they are.
        const app = `poison-${SUFFIX}`;
        apps.push(app);
        await deployWithVolume(server, app, image);
        inApp(app, 'mkdir -p /data/notes');
        // What a killed run left in the staging folder goes with the next run.
        const leftover = Path.join(server.context.dataDir, 'backup-staging', '99999-backup', 'app');
        Fs.mkdirSync(leftover, { recursive: true });
        Fs.writeFileSync(Path.join(leftover, 'secrets.env'), 'TOKEN=left\n');
        inApp(app, 'echo poison > /data/notes/note.txt');
        const poisoned = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups`));
        expect(poisoned.state, poisoned.text).to.equal('succeeded');
        expect(poisoned.text).to.contain('Removed 99999-backup');
        expect(Fs.existsSync(leftover)).to.be.false();
        const [backup] = await listOf(app);
        inApp(app, 'echo good > /data/notes/note.txt');

        const restored = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups/${backup?.id}/restore`));
        expect(restored.state, restored.text).to.equal('rolled back');
        expect(restored.text).to.contain("the recipe's restore command in web failed");
        expect(restored.text).to.contain('Rolled back: put back what was there before the restore');
        expect(inApp(app, 'cat /data/notes/note.txt')).to.equal('good');
        expect(docker('inspect', '-f', '{{.State.Running}}', `${app}-web-1`).trim()).to.equal('true');
        const state = (await server.admin.get(`/api/apps/${app}`)).body as { app: { state: string } };
        expect(state.app.state).to.equal('running');
        expect(resticCheck(server.context.config.backups.repository, PASSWORD).status).to.equal(0);
    });
});
