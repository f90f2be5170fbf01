// needs: docker
import { execFileSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { loadConfig } from '../../../../../lib/config.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import { backupsOf, backupTestServer, deployWithVolume, inApp, removeVolumes, volumeCompose } from '../../../../support/backup-app.ts';
import { buildWebImage, docker, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);

/** Runs what `started` started to its end; answers how it ended and its id. */
async function runOf(server: DeployTestServer, started: { status: number; text: string; body: unknown }) {
    return { ...(await runToEnd(server.admin, started)), runId: (started.body as { runId: number }).runId };
}

/** deployWithVolume's compose file with `environment` added to its web service. */
async function composeWith(server: DeployTestServer, app: string, image: string, environment: Record<string, string>): Promise<string> {
    const port = ((await server.admin.get(`/api/apps/${app}`)).body as { app: { hostPort: number } }).app.hostPort;
    return volumeCompose(image, port, environment);
}

describe('deploy manager: a backup before every change (BACKUP_BEFORE_CHANGES)', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let image: string;
    let repository: string;
    const apps: string[] = [];

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/before-web:${SUFFIX}`, '<h1>before changes</h1>\n', true);
        repository = Path.join(temporaryDirectory('gatehouse-before-changes-'), 'repository');
        server = await backupTestServer(services, {
            BACKUP_PASSWORD: `before-password-${SUFFIX}`,
            BACKUP_REPOSITORY: repository,
            BACKUP_BEFORE_CHANGES: '1',
        });
    });

    after(async () => {
        await removeProjects(apps, [image]);
        removeVolumes(apps);
        await server?.context.cleanup();
        services?.stop();
        Fs.rmSync(Path.dirname(repository), { recursive: true, force: true });
    });

    it('is on unless BACKUP_BEFORE_CHANGES=false', () => {
        expect(loadConfig({}).backups.beforeChanges).to.be.true();
        expect(loadConfig({ BACKUP_BEFORE_CHANGES: 'false' }).backups.beforeChanges).to.be.false();
    });

    it('backs the app up before a redeploy, a compose change and an nginx change, and such a backup restores what was there', async () => {
        const app = `changes-${SUFFIX}`;
        apps.push(app);
        await deployWithVolume(server, app, image);
        // The first deploy had nothing to back up.
        expect(await backupsOf(server.admin, app)).to.equal([]);

        inApp(app, 'echo "before the redeploy" > /data/state.txt');
        const redeployed = await runOf(server, await server.admin.post(`/api/apps/${app}/deploy`, {}));
        expect(redeployed.state, redeployed.text).to.equal('succeeded');
        inApp(app, 'echo "after the redeploy" > /data/state.txt');

        const compose = await composeWith(server, app, image, { GREETING: 'hello' });
        const composed = await runOf(server, await server.admin.put(`/api/apps/${app}/compose`, { mode: 'text', text: compose }));
        expect(composed.state, composed.text).to.equal('succeeded');
        expect(inApp(app, 'echo $GREETING')).to.equal('hello');

        const site = Fs.readFileSync(Path.join(String(services.exports.NGINX_SITES_DIR), `${app}.conf`), 'utf8');
        const changed = `${site.trimEnd()}\n# a comment of the admin's\n`;
        const reloaded = await runOf(server, await server.admin.put(`/api/apps/${app}/nginx`, { mode: 'text', text: changed }));
        expect(reloaded.state, reloaded.text).to.equal('succeeded');

        const made = await backupsOf(server.admin, app);
        expect(made.map((backup) => [backup.reason, backup.runId])).to.equal([
            ['before nginx change', reloaded.runId],
            ['before compose change', composed.runId],
            ['before deploy', redeployed.runId],
        ]);
        for (const backup of made) {
            expect(backup.holds).to.include({ folder: true, site: true, volumes: [`${app}_data`] });
        }

        // The one taken before the redeploy holds the volume and the compose file as they were then.
        const beforeDeploy = made.find((backup) => backup.reason === 'before deploy');
        const restored = await runOf(server, await server.admin.post(`/api/apps/${app}/backups/${beforeDeploy?.id}/restore`));
        expect(restored.state, restored.text).to.equal('succeeded');
        expect(inApp(app, 'cat /data/state.txt')).to.equal('before the redeploy');
        expect(inApp(app, 'echo "${GREETING:-unset}"')).to.equal('unset');
    });

    it('changes nothing when the backup before the change fails, and says why', async () => {
        const app = `unbacked-${SUFFIX}`;
        apps.push(app);
        await deployWithVolume(server, app, image);
        // A backup of its own first, so that the repository exists whatever ran before (a first deploy backs up nothing).
        inApp(app, 'echo "kept" > /data/state.txt');
        const first = await runOf(server, await server.admin.post(`/api/apps/${app}/backups`));
        expect(first.state, first.text).to.equal('succeeded');
        const before = await backupsOf(server.admin, app);
        // The repository can be read and not written: restic cannot lock it, so the backup fails.
        execFileSync('chattr', ['-R', '+i', repository]);
        let refused;
        try {
            const compose = await composeWith(server, app, image, { GREETING: 'never applied' });
            refused = await runOf(server, await server.admin.put(`/api/apps/${app}/compose`, { mode: 'text', text: compose }));
        } finally {
            execFileSync('chattr', ['-R', '-i', repository]);
        }

        expect(refused.state, refused.text).to.equal('rolled back');
        expect(refused.text).to.contain('the backup taken before the change failed, so nothing was changed');
        expect(refused.text).to.contain('BACKUP_BEFORE_CHANGES=false');
        expect(inApp(app, 'echo "${GREETING:-unset}"')).to.equal('unset');
        const shown = (await server.admin.get(`/api/apps/${app}`)).body as { app: { state: string } };
        expect(shown.app.state).to.equal('running');
        const draft = (await server.admin.get(`/api/apps/${app}`)).body;
        expect(JSON.stringify(draft)).to.not.contain('never applied');
        const written = Fs.readFileSync(Path.join(server.context.config.apps.appsDir, app, 'compose.yaml'), 'utf8');
        expect(written).to.not.contain('never applied');
        expect(await backupsOf(server.admin, app)).to.equal(before);
    });

    it('makes a last backup instead of loose archives when a delete removes data, and an app of the same name restores it', async () => {
        const app = `last-${SUFFIX}`;
        apps.push(app);
        await deployWithVolume(server, app, image);
        inApp(app, 'echo "kept by the last backup" > /data/state.txt');
        const archivesDir = server.context.config.apps.archivesDir;
        const archivesBefore = Fs.existsSync(archivesDir) ? Fs.readdirSync(archivesDir) : [];

        const deleted = await runOf(
            server,
            await server.admin.delete(`/api/apps/${app}`, { confirm: app, deleteData: true, removeVolumes: true }),
        );
        expect(deleted.state, deleted.text).to.equal('succeeded');
        expect(deleted.text).to.contain('The backup taken first holds');
        expect(Fs.existsSync(archivesDir) ? Fs.readdirSync(archivesDir) : []).to.equal(archivesBefore);
        expect(docker('volume', 'ls', '-q', '--filter', `name=^${app}_data$`).trim()).to.equal('');

        // Deployed again under its name, the app finds its last backup and gets its data back from it.
        await deployWithVolume(server, app, image);
        const [last] = await backupsOf(server.admin, app);
        expect(last).to.include({ reason: 'before delete', runId: deleted.runId });
        expect(inApp(app, 'cat /data/state.txt 2>/dev/null || echo none')).to.equal('none');
        const restored = await runOf(server, await server.admin.post(`/api/apps/${app}/backups/${last?.id}/restore`));
        expect(restored.state, restored.text).to.equal('succeeded');
        expect(inApp(app, 'cat /data/state.txt')).to.equal('kept by the last backup');
    });
});
