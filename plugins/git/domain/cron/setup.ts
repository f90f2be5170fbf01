import type { Server } from '@hapi/hapi';

import { cron, CRON_WORKER, cronJobName } from './cron-service.ts';
import type { CronJobData, CronOutcome } from './lease.ts';

/** Hands every enabled cron task to Bree; each tick runs jobs/cron-task.ts, which claims the tick in the database. */
export default async function scheduleCronTasks(server: Server): Promise<void> {
    const service = cron(server);
    for (const setting of service.settings.filter((candidate) => candidate.enabled)) {
        const name = cronJobName(setting.name);
        const job: CronJobData = { requests: [{ task: setting.name, cause: 'schedule', schedule: setting.schedule }] };
        await server.app.jobs.schedule({ name, script: CRON_WORKER, ...setting.schedule, workerData: { ...job } });
        server.app.jobs.onMessage(name, (message) => service.report(message as CronOutcome));
    }

    server.ext('onPostStart', () => {
        service.runAtStart().catch((error: unknown) => server.log(['error', 'cron'], error as Error));
    });
}
