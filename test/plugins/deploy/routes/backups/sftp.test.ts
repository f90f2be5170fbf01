// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { backups } from '../../../../../plugins/deploy/domain/backups/backup-service.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { snapshotIds, volumeSnapshotsOf } from '../../../../../plugins/deploy/domain/backups/backup-row.ts';
import { backupsOf, backupTestServer, deployWithVolume, inApp, removeVolumes, resticFor } from '../../../../support/backup-app.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { type RunningSshd, startSshd } from '../../../../support/sshd.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);

describe('deploy manager: backups in an SFTP repository, with a generated password', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let sshd: RunningSshd;
    let server: DeployTestServer;
    let image: string;
    let repository: string;
    const app = `sftp-${SUFFIX}`;

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        sshd = await startSshd();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/backup-sftp:${SUFFIX}`, '<h1>over sftp</h1>\n', true);
        repository = `sftp:root@127.0.0.1:${sshd.dir}/repository`;
        server = await backupTestServer(services, {
            BACKUP_REPOSITORY: repository,
            BACKUP_SFTP_COMMAND: sshd.sftpCommand,
            BACKUP_KEEP: '2 last',
        });
    });

    after(async () => {
        await removeProjects([app], [image]);
        removeVolumes([app]);
        await server?.context.cleanup();
        sshd?.stop();
        services?.stop();
    });

    let deployed: Promise<unknown> | undefined;
    const haveDeployed = () => (deployed ??= deployWithVolume(server, app, image));

    /**
     * Two backups of the app for the retention test: the first test's (a manual one and the one before its restore),
     * else two made here of a volume with a file in it.
     */
    const haveTwoBackups = async () => {
        await haveDeployed();
        if ((await backupsOf(server.admin, app)).length === 0) {
            inApp(app, 'echo "kept" > /data/retained.txt');
            for (let count = 1; count <= 2; count += 1) {
                const made = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups`));
                expect(made.state, made.text).to.equal('succeeded');
            }
        }

        return await backupsOf(server.admin, app);
    };

    it('backs up to an OpenSSH server and restores from it, the repository sound', async () => {
        await haveDeployed();
        inApp(app, 'echo "over sftp" > /data/kept.txt');

        const backedUp = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups`));
        expect(backedUp.state, backedUp.text).to.equal('succeeded');
        const [backup] = await backupsOf(server.admin, app);
        expect(backup?.holds.volumes).to.equal([`${app}_data`]);

        inApp(app, 'rm /data/kept.txt');
        const restored = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups/${backup?.id}/restore`));
        expect(restored.state, restored.text).to.equal('succeeded');
        expect(inApp(app, 'cat /data/kept.txt')).to.equal('over sftp');
        expect((await backupsOf(server.admin, app))[0]?.reason).to.equal('before restore');

        const { password } = await backups(server.context.server).repository();
        const checked = resticFor(repository, password, ['check'], ['-o', `sftp.command=${sshd.sftpCommand}`]);
        expect(checked.status, `${checked.stdout}${checked.stderr}`).to.equal(0);
    });

    it('keeps the generated password sealed with the master key, never in the clear', async () => {
        const { password } = await backups(server.context.server).repository();
        expect(password).to.have.length(64);
        const rows = await server.context.database.knex('dp_backup_keys').select('password_sealed');
        expect(rows).to.have.length(1);
        const sealed = String(rows[0]?.password_sealed);
        expect(sealed.startsWith('v1:')).to.be.true();
        expect(sealed).to.not.contain(password);
        const listed = await server.admin.get(`/api/apps/${app}/backups`);
        expect(listed.text).to.not.contain(password);
    });

    it('keeps the backups BACKUP_KEEP asks for once a new one is made, in the list and in the repository', async () => {
        const before = await haveTwoBackups();
        expect(before).to.have.length(2);
        const backedUp = await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/backups`));
        expect(backedUp.state, backedUp.text).to.equal('succeeded');
        expect(backedUp.text).to.contain('Kept the backups BACKUP_KEEP asks for (2 last): removed 1');
        const after = await backupsOf(server.admin, app);
        expect(after.map((backup) => backup.id)).to.equal([(before[0]?.id ?? 0) + 1, before[0]?.id]);

        const { password } = await backups(server.context.server).repository();
        // A backup is the app's snapshot and its volume's (none when the volume was empty, as before the restore):
        // the repository holds those of the backups kept, and the volume snapshot of the one removed went with it.
        const rows = await server.context.database.knex('dp_backups').where({ app_name: app }).select('snapshot', 'volume_snapshots');
        const kept = rows.flatMap((row: { snapshot: string; volume_snapshots: string | null }) => [
            row.snapshot,
            ...snapshotIds(volumeSnapshotsOf(row)),
        ]);
        const listed = resticFor(repository, password, ['snapshots', '--json'], ['-o', `sftp.command=${sshd.sftpCommand}`]);
        expect(listed.status, listed.stderr).to.equal(0);
        const snapshots = JSON.parse(listed.stdout) as Array<{ id: string; tags: string[] }>;
        expect(snapshots.map((snapshot) => snapshot.id).sort()).to.equal(kept.sort());
        expect(snapshots.some((snapshot) => snapshot.tags.includes(`volume-of:${app}`))).to.be.true();
    });
});
