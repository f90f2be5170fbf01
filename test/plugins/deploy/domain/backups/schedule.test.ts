// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ConfigError, loadConfig } from '../../../../../lib/config.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { backupsOf, backupTestServer, deployWithVolume, removeVolumes } from '../../../../support/backup-app.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const APP = `nightly-${SUFFIX}`;

interface AuditEntry {
    action: string;
    target: string;
    actor: { id: number; email: string } | null;
    details?: Record<string, unknown>;
}

describe('deploy manager: backups on a schedule (BACKUP_SCHEDULE, or an app’s own)', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let image: string;

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/nightly-web:${SUFFIX}`, '<h1>nightly</h1>\n', true);
        // Every three seconds (six fields: seconds first), so that the test sees ticks without waiting for a minute.
        server = await backupTestServer(services, { BACKUP_PASSWORD: `schedule-password-${SUFFIX}`, BACKUP_SCHEDULE: '*/3 * * * * *' });
    });

    after(async () => {
        await removeProjects([APP], [image]);
        removeVolumes([APP]);
        await server?.context.cleanup();
        services?.stop();
    });

    it('refuses a schedule that is not a cron expression, naming it', () => {
        for (const schedule of ['daily', '* * * *', '30 2 * * * * *', '30 2 * * MON;rm', '99 2 * * *', '*/0 * * * *']) {
            expect(() => loadConfig({ BACKUP_SCHEDULE: schedule }), schedule).to.throw(ConfigError, /BACKUP_SCHEDULE/);
        }

        expect(loadConfig({ BACKUP_SCHEDULE: '15 4 * * *' }).backups.schedule).to.equal('15 4 * * *');
        // Nightly by default; `off` leaves backups to hand.
        expect(loadConfig({}).backups.schedule).to.equal('30 2 * * *');
        expect(loadConfig({ BACKUP_SCHEDULE: 'off' }).backups.schedule).to.be.undefined();
    });

    it('backs every deployed app up at the scheduled times, as runs no user started', async () => {
        await deployWithVolume(server, APP, image);
        const scheduled = await waitUntil(
            'a scheduled backup of the app',
            async () => (await backupsOf(server.admin, APP)).find((backup) => backup.reason === 'scheduled'),
            { timeoutMs: 240_000, intervalMs: 500 },
        );
        expect(scheduled.runId).to.be.a.number();

        // The backup is listed as soon as restic has stored it; its run ends a moment later.
        const run = await waitUntil(
            'the scheduled backup run to end',
            async () => {
                const { runs } = (await server.admin.get(`/api/apps/${APP}/runs`)).body as {
                    runs: Array<{ id: number; kind: string; state: string }>;
                };
                const found = runs.find((candidate) => candidate.id === scheduled.runId);
                return found && found.state !== 'running' ? found : undefined;
            },
            { timeoutMs: 60_000, intervalMs: 200 },
        );
        expect(run).to.include({ kind: 'backup', state: 'succeeded' });
        const audit = (await server.admin.get(`/api/admin/audit?action=runs.backup&target=${APP}`)).body as { entries: AuditEntry[] };
        const started = audit.entries.find((entry) => entry.details?.run === scheduled.runId);
        expect(started?.actor).to.equal(null);

        // Ticks go on: a second scheduled backup follows, and none ran beside another.
        await waitUntil(
            'a second scheduled backup',
            async () => (await backupsOf(server.admin, APP)).filter((backup) => backup.reason === 'scheduled').length >= 2,
            { timeoutMs: 240_000, intervalMs: 500 },
        );
        const all = (await server.admin.get(`/api/apps/${APP}/runs`)).body as { runs: Array<{ kind: string; state: string }> };
        expect(all.runs.filter((candidate) => candidate.kind === 'backup').every((candidate) => candidate.state !== 'failed')).to.be.true();
    });

    describe('each app by its own schedule, BACKUP_SCHEDULE off', () => {
        const OWN = `own-${SUFFIX}`;
        const NEVER = `never-${SUFFIX}`;
        let own: DeployTestServer;

        const backupRuns = async (app: string) =>
            ((await own.admin.get(`/api/apps/${app}/runs`)).body as { runs: Array<{ kind: string; state: string }> }).runs.filter(
                (run) => run.kind === 'backup',
            );
        const setSchedule = async (app: string, schedule: string | null) => {
            const set = await own.admin.put(`/api/apps/${app}/backups/schedule`, { schedule });
            expect(set.status, set.text).to.equal(200);
        };

        before({ timeout: 600_000 }, async () => {
            // The test servers' BACKUP_SCHEDULE is off; two backups of each app are kept.
            own = await backupTestServer(services, { BACKUP_PASSWORD: `own-schedule-password-${SUFFIX}`, BACKUP_KEEP: '2 last' });
        });

        after(async () => {
            await removeProjects([OWN, NEVER], []);
            removeVolumes([OWN, NEVER]);
            await own?.context.cleanup();
        });

        it('backs an app up at its own times and never one that is off, keeps BACKUP_KEEP, and forgets a deleted app’s', async () => {
            await deployWithVolume(own, NEVER, image);
            await setSchedule(NEVER, 'off');
            await deployWithVolume(own, OWN, image);
            // Every two seconds (six fields: seconds first).
            await setSchedule(OWN, '*/2 * * * * *');
            await waitUntil(
                'three scheduled backups of the app with its own schedule',
                async () => (await backupRuns(OWN)).filter((run) => run.state === 'succeeded').length >= 3,
                { timeoutMs: 240_000, intervalMs: 500 },
            );
            await setSchedule(OWN, 'off');
            await waitUntil('its last backup run to end', async () => (await backupRuns(OWN)).every((run) => run.state !== 'running'), {
                timeoutMs: 120_000,
                intervalMs: 200,
            });

            expect((await backupRuns(OWN)).every((run) => run.state === 'succeeded')).to.be.true();
            // BACKUP_KEEP applies to the scheduled backups as to any.
            expect((await backupsOf(own.admin, OWN)).map((backup) => backup.reason)).to.equal(['scheduled', 'scheduled']);
            expect(await backupRuns(NEVER)).to.equal([]);
            expect(await backupsOf(own.admin, NEVER)).to.equal([]);

            const deleted = await runToEnd(
                own.admin,
                await own.admin.delete(`/api/apps/${NEVER}`, { confirm: NEVER, removeVolumes: true }),
            );
            expect(deleted.state, deleted.text).to.equal('succeeded');
            expect(await own.context.server.app.knex('dp_app_backup_schedules').where({ app_name: NEVER })).to.equal([]);
            expect(await own.context.server.app.knex('dp_app_backup_schedules').where({ app_name: OWN })).to.have.length(1);
        });
    });
});
