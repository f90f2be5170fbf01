/**
 * Gitea's cron tasks that apply to what Gatehouse has, in Gitea's registration order (basic, extended, actions).
 * Each runs in a Bree worker with its own database connection, so it works on knex and the configuration only.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import type { Knex } from 'knex';

import type { Config } from '../../../../lib/config.ts';
import { runGit } from '../repositories/git.ts';
import { aggregateStatus, STATUS } from '../actions/status.ts';
import { directorySize } from '../../../../lib/files.ts';
import { withTimeout } from '../../../../lib/timeout.ts';

export interface TaskContext {
    knex: Knex;
    config: Config;
    /** Records a system notice, as Gitea does for a repository that fails its check. */
    notice(type: NoticeType, description: string): Promise<void>;
}

export const NOTICE = { repository: 1, task: 2 } as const;
export type NoticeType = (typeof NOTICE)[keyof typeof NOTICE];

export interface CronTaskDefinition {
    name: string;
    enabled: boolean;
    schedule: string;
    runAtStart: boolean;
    /** Does the work; the returned text is recorded with the execution. */
    run(context: TaskContext): Promise<string>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const GIT_TIMEOUT_MS = 60_000;

interface RepositoryOnDisk {
    id: number;
    fullName: string;
    directory: string;
}

async function repositoriesOnDisk(context: TaskContext): Promise<RepositoryOnDisk[]> {
    const rows = await context.knex('repositories').orderBy('id').select('id', 'owner_name', 'name', 'lower_name');
    return rows.map((row: Record<string, unknown>) => ({
        id: Number(row.id),
        fullName: `${String(row.owner_name)}/${String(row.name)}`,
        directory: Path.join(context.config.repositoriesDir, String(row.owner_name).toLowerCase(), `${String(row.lower_name)}.git`),
    }));
}

function reason(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

/** `git fsck` on every repository; each failure becomes a repository notice. */
async function repoHealthCheck(context: TaskContext): Promise<string> {
    const failed: string[] = [];
    const repos = await repositoriesOnDisk(context);
    for (const repo of repos) {
        try {
            if (!Fs.existsSync(repo.directory)) {
                throw new Error(`${repo.directory} does not exist`);
            }

            await withTimeout(runGit(['fsck', '--no-progress'], { gitDir: repo.directory }), GIT_TIMEOUT_MS, 'git fsck');
        } catch (error) {
            failed.push(repo.fullName);
            await context.notice(NOTICE.repository, `Failed to health check repository (${repo.fullName}): ${reason(error)}`);
        }
    }

    return `checked ${repos.length} repositories, ${failed.length} failed${failed.length ? `: ${failed.join(', ')}` : ''}`;
}

/** Recounts what the records say about the disk: size and emptiness. */
async function checkRepoStats(context: TaskContext): Promise<string> {
    let corrected = 0;
    for (const repo of await repositoriesOnDisk(context)) {
        if (!Fs.existsSync(repo.directory)) {
            continue;
        }

        const refs = await runGit(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], { gitDir: repo.directory });
        const facts = { size: await directorySize(repo.directory), is_empty: refs.trim() === '' };
        const current = await context.knex('repositories').where({ id: repo.id }).first('size', 'is_empty');
        if (current && (Number(current.size) !== facts.size || Boolean(current.is_empty) !== facts.is_empty)) {
            await context.knex('repositories').where({ id: repo.id }).update(facts);
            corrected += 1;
        }
    }

    return `corrected the statistics of ${corrected} repositories`;
}

/** Issue 7's delivery table, whatever it is called when it lands; nothing to do before. */
const HOOK_DELIVERY_TABLES = ['hook_tasks', 'hook_task', 'webhook_deliveries', 'hook_deliveries'];
const HOOK_DELIVERY_AGE_MS = 168 * HOUR;

async function cleanupHookTaskTable(context: TaskContext): Promise<string> {
    for (const table of HOOK_DELIVERY_TABLES) {
        if (!(await context.knex.schema.hasTable(table))) {
            continue;
        }

        const columns = Object.keys(await context.knex(table).columnInfo());
        const timeColumn = ['delivered_at', 'delivered', 'created_at'].find((column) => columns.includes(column));
        if (!timeColumn) {
            return `${table} has no time column to clean by`;
        }

        const query = context.knex(table).where(timeColumn, '<', Date.now() - HOOK_DELIVERY_AGE_MS);
        if (columns.includes('is_delivered')) {
            query.where('is_delivered', true);
        }

        return `deleted ${await query.delete()} deliveries older than 7 days from ${table}`;
    }

    return 'no hook delivery table yet';
}

/** Blobs no package file points at any more (left by an interrupted upload or delete), a day after they were made. */
async function cleanupPackages(context: TaskContext): Promise<string> {
    const orphans = await context
        .knex('package_blobs')
        .whereNotExists(context.knex('package_files').whereRaw('package_files.blob_id = package_blobs.id'))
        .where('created_at', '<', Date.now() - DAY)
        .select('id', 'hash_sha256');
    for (const blob of orphans) {
        const sha = String(blob.hash_sha256);
        await context.knex('package_blobs').where({ id: blob.id }).delete();
        await Fs.promises.rm(Path.join(context.config.packagesDir, sha.slice(0, 2), sha.slice(2, 4), sha), { force: true });
    }

    return `removed ${orphans.length} unreferenced package blobs`;
}

/** Never-activated individual accounts older than the activation window, if they own and belong to nothing. */
async function deleteInactiveAccounts(context: TaskContext): Promise<string> {
    const { knex } = context;
    const owns = (table: string, column: string) => knex(table).whereRaw(`${table}.${column} = users.id`);
    const deleted = await knex('users')
        .where({ type: 0, is_active: false })
        .where('created_at', '<', Date.now() - context.config.activeCodeLiveMinutes * 60_000)
        .whereNotExists(owns('repositories', 'owner_id'))
        .whereNotExists(owns('packages', 'owner_id'))
        .whereNotExists(owns('org_users', 'uid'))
        .delete();
    return `deleted ${deleted} inactive accounts`;
}

async function gitGcRepos(context: TaskContext): Promise<string> {
    const failed: string[] = [];
    const repos = (await repositoriesOnDisk(context)).filter((repo) => Fs.existsSync(repo.directory));
    for (const repo of repos) {
        try {
            await withTimeout(runGit(['gc', '--quiet'], { gitDir: repo.directory }), GIT_TIMEOUT_MS, 'git gc');
            await context
                .knex('repositories')
                .where({ id: repo.id })
                .update({ size: await directorySize(repo.directory) });
        } catch (error) {
            failed.push(repo.fullName);
            await context.notice(NOTICE.repository, `Repository garbage collection failed for ${repo.fullName}: ${reason(error)}`);
        }
    }

    if (failed.length > 0) {
        throw new Error(`git gc failed for ${failed.join(', ')}`);
    }

    return `garbage-collected ${repos.length} repositories`;
}

async function deleteMissingRepos(context: TaskContext): Promise<string> {
    const missing = (await repositoriesOnDisk(context)).filter((repo) => !Fs.existsSync(repo.directory));
    for (const repo of missing) {
        await context.knex('repositories').where({ id: repo.id }).delete();
    }

    return `deleted ${missing.length} repository records without files${missing.length ? `: ${missing.map((repo) => repo.fullName).join(', ')}` : ''}`;
}

async function deleteOldSystemNotices(context: TaskContext): Promise<string> {
    const deleted = await context
        .knex('system_notices')
        .where('created_at', '<', Date.now() - 365 * DAY)
        .delete();
    return `deleted ${deleted} system notices older than a year`;
}

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
async function stopZombieTasks(context: TaskContext): Promise<string> {
    const stopped = await endJobs(context.knex, STATUS.failure, (query) =>
        query.where({ status: STATUS.running }).where('updated_at', '<', Date.now() - 10 * 60_000),
    );
    return `stopped ${stopped} zombie jobs`;
}

/** Running jobs past Gitea's default three-hour timeout. */
async function stopEndlessTasks(context: TaskContext): Promise<string> {
    const stopped = await endJobs(context.knex, STATUS.failure, (query) =>
        query.where({ status: STATUS.running }).where('started', '<', Date.now() - 3 * HOUR),
    );
    return `stopped ${stopped} endless jobs`;
}

/** Jobs no runner picked up within a day. */
async function cancelAbandonedJobs(context: TaskContext): Promise<string> {
    const cancelled = await endJobs(context.knex, STATUS.cancelled, (query) =>
        query.whereIn('status', [STATUS.waiting, STATUS.blocked]).where('updated_at', '<', Date.now() - DAY),
    );
    return `cancelled ${cancelled} abandoned jobs`;
}

/** Old job logs, and registration tokens that were replaced or used (they can no longer register anything). */
async function cleanupActions(context: TaskContext): Promise<string> {
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

const task = (name: string, enabled: boolean, schedule: string, run: CronTaskDefinition['run']): CronTaskDefinition => ({
    name,
    enabled,
    schedule,
    runAtStart: false,
    run,
});

export const CRON_TASKS: readonly CronTaskDefinition[] = [
    task('repo_health_check', true, '@midnight', repoHealthCheck),
    task('check_repo_stats', true, '@midnight', checkRepoStats),
    task('cleanup_hook_task_table', true, '@midnight', cleanupHookTaskTable),
    task('cleanup_packages', true, '@midnight', cleanupPackages),
    task('delete_inactive_accounts', false, '@annually', deleteInactiveAccounts),
    task('git_gc_repos', false, '@every 72h', gitGcRepos),
    task('delete_missing_repos', false, '@every 72h', deleteMissingRepos),
    task('delete_old_system_notices', false, '@every 168h', deleteOldSystemNotices),
    task('stop_zombie_tasks', true, '@every 5m', stopZombieTasks),
    task('stop_endless_tasks', true, '@every 30m', stopEndlessTasks),
    task('cancel_abandoned_jobs', true, '@every 6h', cancelAbandonedJobs),
    task('cleanup_actions', true, '@midnight', cleanupActions),
];

export function cronTask(name: string): CronTaskDefinition | undefined {
    return CRON_TASKS.find((definition) => definition.name === name);
}
