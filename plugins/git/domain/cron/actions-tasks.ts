/** Gitea's cron tasks on Actions: jobs whose runner is gone, that run too long or that nobody picks up, and old logs. */
import type { Knex } from 'knex';

import { aggregateStatus, STATUS } from '../actions/status.ts';
import { DAY, HOUR, type TaskContext } from './task-context.ts';

/** Ends jobs matching `where` with `status`, and settles their runs' statuses. */
async function endJobs(knex: Knex, status: number, where: (query: Knex.QueryBuilder) => void): Promise<number> {
    const query = knex('action_run_jobs');
    where(query);
    const jobs = await query.clone().select('id', 'run_id');
    if (jobs.length === 0) {
        return 0;
    }

    const at = Date.now();
    await knex('action_run_jobs')
        .whereIn(
            'id',
            jobs.map((job: { id: number }) => job.id),
        )
        .update({ status, stopped: at, updated_at: at });
    for (const runId of new Set(jobs.map((job: { run_id: number }) => Number(job.run_id)))) {
        const statuses = await knex('action_run_jobs').where({ run_id: runId }).pluck('status');
        const runStatus = aggregateStatus(statuses.map(Number));
        await knex('action_runs').where({ id: runId }).update({ status: runStatus, stopped: at, updated_at: at });
    }

    return jobs.length;
}

/** Running jobs that have not been heard of for ten minutes: their runner is gone. */
export async function stopZombieTasks(context: TaskContext): Promise<string> {
    const stopped = await endJobs(context.knex, STATUS.failure, (query) =>
        query.where({ status: STATUS.running }).where('updated_at', '<', Date.now() - 10 * 60_000),
    );
    return `stopped ${stopped} zombie jobs`;
}

/** Running jobs past Gitea's default three-hour timeout. */
export async function stopEndlessTasks(context: TaskContext): Promise<string> {
    const stopped = await endJobs(context.knex, STATUS.failure, (query) =>
        query.where({ status: STATUS.running }).where('started', '<', Date.now() - 3 * HOUR),
    );
    return `stopped ${stopped} endless jobs`;
}

/** Jobs no runner picked up within a day. */
export async function cancelAbandonedJobs(context: TaskContext): Promise<string> {
    const cancelled = await endJobs(context.knex, STATUS.cancelled, (query) =>
        query.whereIn('status', [STATUS.waiting, STATUS.blocked]).where('updated_at', '<', Date.now() - DAY),
    );
    return `cancelled ${cancelled} abandoned jobs`;
}

/** Old job logs, and registration tokens that were replaced or used (they can no longer register anything). */
export async function cleanupActions(context: TaskContext): Promise<string> {
    const logs = await context
        .knex('action_logs')
        .where('created_at', '<', Date.now() - context.config.actionsLogRetentionDays * DAY)
        .delete();
    const tokens = await context
        .knex('action_runner_tokens')
        .where({ is_active: false })
        .where('updated_at', '<', Date.now() - DAY)
        .delete();
    return `deleted ${logs} old job logs and ${tokens} expired registration tokens`;
}
