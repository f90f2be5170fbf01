import type { Server } from '@hapi/hapi';

import { takeBackupsFirstWith } from '../lifecycle/backup-first.ts';
import { runs } from '../runs/run-service.ts';
import { backupSchedules, SCHEDULED_BACKUPS_JOB, SCHEDULES_REREAD_MS } from './backup-schedules.ts';

export default async function setUpBackups(server: Server): Promise<void> {
    // Runs that change a deployed app take a backup first (BACKUP_BEFORE_CHANGES; the lifecycle asks whether it is on).
    takeBackupsFirstWith(server, async (app, reason) => {
        // Imported by the first run that takes one: the backups reach the compose files and the recipes, which a start need not load.
        const { backups } = await import('./backup-service.ts');
        return await backups(server).firstOf(app, reason);
    });
    await scheduleBackups(server);
}

/**
 * Bree ticks at every time of the schedules in effect (jobs/scheduled-backups.ts): BACKUP_SCHEDULE's, which the apps
 * without their own follow, and the apps' own; at each tick the apps whose time came are backed up, one after the
 * other, by runs of the schedule's own (no user started them). The schedules are read again every minute, for what
 * another server changed; a deleted app's own schedule goes with it.
 */
async function scheduleBackups(server: Server): Promise<void> {
    const schedules = backupSchedules(server);
    server.app.jobs.onMessage(SCHEDULED_BACKUPS_JOB, () => schedules.tick());
    await schedules.arm();
    const reread = setInterval(() => {
        schedules
            .arm()
            .catch((error: unknown) =>
                server.log(['error', 'deploy', 'backups'], `reading the backup schedules failed: ${(error as Error).message}`),
            );
    }, SCHEDULES_REREAD_MS).unref();
    // After Bree has stopped its workers: a backup under way then ends at once (as a stop ends any run), and the
    // server closes its database only once the schedule's code is done with it.
    server.ext(
        'onPreStop',
        async () => {
            clearInterval(reread);
            await schedules.stopTicking();
        },
        { after: ['jobs'] },
    );
    runs(server).onEnded(async (run) => {
        if (run.kind === 'delete' && run.state === 'succeeded') {
            await schedules.forgetApp(run.app);
        }
    });
}
