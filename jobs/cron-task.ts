/** One Gitea cron task, run by Bree on its schedule or at an administrator's request; see plugins/git/domain/cron. */
import { type CronRequest, executeCronTask } from '../plugins/git/domain/cron/lease.ts';
import { done, jobData, post, withDatabase } from '../lib/worker.ts';

const data = jobData<CronRequest>();
const outcome = await withDatabase(async (knex) => await executeCronTask(knex, data.config, data));
post(outcome);
done();
