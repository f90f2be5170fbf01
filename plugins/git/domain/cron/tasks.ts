/**
 * Gitea's cron tasks, all 28 of a default install, in Gitea's registration order (basic, extended, actions) with its
 * default schedules and flags. Those whose subject exists here do their work; the others run and are recorded like
 * any task, and say why there is nothing for them to do here, so that calling one by name answers as Gitea does.
 * Each runs in a Bree worker with its own database connection, so it works on knex and the configuration only.
 */
import { cancelAbandonedJobs, cleanupActions, stopEndlessTasks, stopZombieTasks } from './actions-tasks.ts';
import { cleanupHookTaskTable, cleanupPackages, deleteInactiveAccounts, deleteOldSystemNotices } from './housekeeping-tasks.ts';
import { checkRepoStats, deleteMissingRepos, gitGcRepos, reinitMissingRepos, repoHealthCheck } from './repository-tasks.ts';
import type { CronTaskDefinition } from './task-context.ts';

interface Defaults {
    enabled: boolean;
    schedule: string;
    runAtStart?: boolean;
}

const task = (name: string, defaults: Defaults, run: CronTaskDefinition['run']): CronTaskDefinition => ({
    name,
    runAtStart: false,
    ...defaults,
    run,
});

/** The run of a task whose subject Gatehouse does not have. */
const nothingHere =
    (why: string): CronTaskDefinition['run'] =>
    async () =>
        `nothing to do here: ${why}`;

const NO_ARCHIVES = 'no repository archives are kept: Gatehouse does not generate archives';
const NO_SSH = 'Gatehouse serves no SSH, so it writes no';

export const CRON_TASKS: readonly CronTaskDefinition[] = [
    task(
        'update_mirrors',
        { enabled: true, schedule: '@every 10m' },
        nothingHere('there are no mirrors: Gatehouse creates no pull or push mirrors'),
    ),
    task('repo_health_check', { enabled: true, schedule: '@midnight' }, repoHealthCheck),
    task('check_repo_stats', { enabled: true, schedule: '@midnight', runAtStart: true }, checkRepoStats),
    task('archive_cleanup', { enabled: true, schedule: '@midnight', runAtStart: true }, nothingHere(NO_ARCHIVES)),
    task(
        'sync_external_users',
        { enabled: true, schedule: '@midnight' },
        nothingHere('there are no external authentication sources (LDAP, OAuth2, SMTP, PAM): every account is local'),
    ),
    task(
        'deleted_branches_cleanup',
        { enabled: true, schedule: '@midnight', runAtStart: true },
        nothingHere('no deleted branches are kept: branches live only in the repositories'),
    ),
    task(
        'update_migration_poster_id',
        { enabled: true, schedule: '@midnight', runAtStart: true },
        nothingHere('no repository was migrated here: Gatehouse migrates nothing from other services'),
    ),
    task('cleanup_hook_task_table', { enabled: true, schedule: '@midnight' }, cleanupHookTaskTable),
    task('cleanup_packages', { enabled: true, schedule: '@midnight', runAtStart: true }, cleanupPackages),
    task(
        'sync_repo_licenses',
        { enabled: false, schedule: '@annually' },
        nothingHere("repositories' licenses are not detected or stored here"),
    ),
    task('delete_inactive_accounts', { enabled: false, schedule: '@annually' }, deleteInactiveAccounts),
    task('delete_repo_archives', { enabled: false, schedule: '@annually' }, nothingHere(NO_ARCHIVES)),
    task('git_gc_repos', { enabled: false, schedule: '@every 72h' }, gitGcRepos),
    task('resync_all_sshkeys', { enabled: false, schedule: '@every 72h' }, nothingHere(`${NO_SSH} authorized_keys file`)),
    task('resync_all_sshprincipals', { enabled: false, schedule: '@every 72h' }, nothingHere(`${NO_SSH} authorized_principals file`)),
    task(
        'resync_all_hooks',
        { enabled: false, schedule: '@every 72h' },
        nothingHere('Gatehouse puts no git hooks in repositories: it receives no pushes'),
    ),
    task('reinit_missing_repos', { enabled: false, schedule: '@every 72h' }, reinitMissingRepos),
    task('delete_missing_repos', { enabled: false, schedule: '@every 72h' }, deleteMissingRepos),
    task(
        'delete_generated_repository_avatars',
        { enabled: false, schedule: '@every 72h' },
        nothingHere('repositories have no avatars here'),
    ),
    task('delete_old_actions', { enabled: false, schedule: '@every 168h' }, nothingHere('no activity feed is recorded here')),
    task(
        'update_checker',
        { enabled: true, schedule: '@every 168h' },
        nothingHere('Gatehouse is not a Gitea build: there is no Gitea release to check for'),
    ),
    task('delete_old_system_notices', { enabled: false, schedule: '@every 168h' }, deleteOldSystemNotices),
    task(
        'rebuild_issue_indexer',
        { enabled: false, schedule: '@annually' },
        nothingHere('issues are read from the database; there is no issue index to rebuild'),
    ),
    task('stop_zombie_tasks', { enabled: true, schedule: '@every 5m', runAtStart: true }, stopZombieTasks),
    task('stop_endless_tasks', { enabled: true, schedule: '@every 30m', runAtStart: true }, stopEndlessTasks),
    task('cancel_abandoned_jobs', { enabled: true, schedule: '@every 6h', runAtStart: true }, cancelAbandonedJobs),
    task(
        'start_schedule_tasks',
        { enabled: true, schedule: '@every 1m' },
        nothingHere('no workflow has a schedule trigger: workflow files are not read here'),
    ),
    task('cleanup_actions', { enabled: true, schedule: '@midnight' }, cleanupActions),
];

/** Gitea's tasks that a default install does not register either, and why Gatehouse never does. */
export const UNREGISTERED_TASKS: Readonly<Record<string, string>> = {
    gc_lfs: 'Gitea registers it only when it serves Git LFS, which Gatehouse does not',
};

export function cronTask(name: string): CronTaskDefinition | undefined {
    return CRON_TASKS.find((definition) => definition.name === name);
}
