import type { Server } from '@hapi/hapi';

import { lifecycle } from '../lifecycle/lifecycle-service.ts';
import { backups } from './backup-service.ts';

export const SCHEDULED_BACKUPS_JOB = 'scheduled-backups';

export default async function setUpBackups(server: Server): Promise<void> {
    // Runs that change a deployed app take a backup first (BACKUP_BEFORE_CHANGES; the lifecycle asks whether it is on).
    lifecycle(server).takeBackupsFirstWith((app, reason) => backups(server).firstOf(app, reason));
    await scheduleBackups(server);
}

/**
 * With BACKUP_SCHEDULE set, Bree ticks at its times (jobs/scheduled-backups.ts) and every deployed app is backed
 * up, one after the other, by runs of the schedule's own (no user started them); a tick that comes while the last
 * one's backups still run is let go.
 */
async function scheduleBackups(server: Server): Promise<void> {
    const schedule = server.app.config.backups.schedule;
    if (!schedule) {
        return;
    }

    await server.app.jobs.schedule({ name: SCHEDULED_BACKUPS_JOB, cron: schedule, hasSeconds: schedule.split(/\s+/).length === 6 });
    let running = false;
    server.app.jobs.onMessage(SCHEDULED_BACKUPS_JOB, () => {
        if (running) {
            return;
        }

        running = true;
        backups(server)
            .backUpAll()
            .then(({ backedUp, skipped }) => {
                const failed = backedUp.filter((backup) => backup.state !== 'succeeded');
                server.log(
                    ['deploy', 'backups'],
                    `scheduled backups: ${backedUp.length - failed.length} made, ${failed.length} failed, ${skipped.length} not started`,
                );
                for (const { app, reason } of skipped)
                    server.log(['deploy', 'backups'], `scheduled backup of ${app} not started: ${reason}`);
            })
            .catch((error: unknown) => server.log(['error', 'deploy', 'backups'], `scheduled backups failed: ${(error as Error).message}`))
            .finally(() => {
                running = false;
            });
    });
}
