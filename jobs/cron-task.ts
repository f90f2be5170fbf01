/** Gitea cron tasks, run by Bree on their schedule, at an administrator's request or at start; see plugins/git/domain/cron. */
import { type CronJobData, executeCronTask } from '../plugins/git/domain/cron/lease.ts';
import { done, jobData, post, withDatabase } from '../lib/worker.ts';

const data = jobData<CronJobData>();
await withDatabase(async (knex) => {
    for (const request of data.requests) {
        post(await executeCronTask(knex, data.config, request));
    }
});
done();
