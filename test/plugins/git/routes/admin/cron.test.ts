import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { repositories } from '../../../../../plugins/git/domain/repositories/repository-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';
import { waitUntil } from '../../../../helpers/wait.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ApiCron {
    name: string;
    schedule: string;
    next: string;
    prev: string;
    exec_times: number;
}

/** Gitea's tasks in its registration order (basic, extended, actions) with their default schedules; '-': disabled. */
const GITEA_DEFAULTS: [name: string, schedule: string][] = [
    ['update_mirrors', '@every 10m'],
    ['repo_health_check', '@midnight'],
    ['check_repo_stats', '@midnight'],
    ['archive_cleanup', '@midnight'],
    ['sync_external_users', '@midnight'],
    ['deleted_branches_cleanup', '@midnight'],
    ['update_migration_poster_id', '@midnight'],
    ['cleanup_hook_task_table', '@midnight'],
    ['cleanup_packages', '@midnight'],
    ['sync_repo_licenses', '-'],
    ['delete_inactive_accounts', '-'],
    ['delete_repo_archives', '-'],
    ['git_gc_repos', '-'],
    ['resync_all_sshkeys', '-'],
    ['resync_all_sshprincipals', '-'],
    ['resync_all_hooks', '-'],
    ['reinit_missing_repos', '-'],
    ['delete_missing_repos', '-'],
    ['delete_generated_repository_avatars', '-'],
    ['delete_old_actions', '-'],
    ['update_checker', '@every 168h'],
    ['delete_old_system_notices', '-'],
    ['rebuild_issue_indexer', '-'],
    ['stop_zombie_tasks', '@every 5m'],
    ['stop_endless_tasks', '@every 30m'],
    ['cancel_abandoned_jobs', '@every 6h'],
    ['start_schedule_tasks', '@every 1m'],
    ['cleanup_actions', '@midnight'],
];
const TASKS = GITEA_DEFAULTS.map(([name]) => name);

/** The file's servers: git_gc_repos on, and cleanup_actions on a schedule of its own. */
const CRON_ENVIRONMENT = { CRON_GIT_GC_REPOS_ENABLED: 'true', CRON_CLEANUP_ACTIONS_SCHEDULE: '@every 1h' };

/** The tasks whose subject Gatehouse does not have, and a word their recorded reason must name. */
const ABSENT_SUBJECTS: Record<string, RegExp> = {
    update_mirrors: /mirrors/,
    archive_cleanup: /archives/,
    sync_external_users: /external authentication sources/,
    deleted_branches_cleanup: /deleted branches/,
    update_migration_poster_id: /migrated/,
    sync_repo_licenses: /licenses/,
    delete_repo_archives: /archives/,
    resync_all_sshkeys: /authorized_keys/,
    resync_all_sshprincipals: /authorized_principals/,
    resync_all_hooks: /git hooks/,
    delete_generated_repository_avatars: /avatars/,
    delete_old_actions: /activity feed/,
    update_checker: /Gitea release/,
    rebuild_issue_indexer: /issue index/,
    start_schedule_tasks: /schedule/,
};

/** Overwrites one loose object with garbage, as a disk fault would. */
function corruptOneObject(gitDir: string): void {
    const objects = Path.join(gitDir, 'objects');
    const folder = Fs.readdirSync(objects).find((name) => /^[0-9a-f]{2}$/.test(name));
    if (!folder) {
        throw new Error('no loose object to corrupt');
    }

    const [file] = Fs.readdirSync(Path.join(objects, folder));
    const path = Path.join(objects, folder, file ?? '');
    Fs.chmodSync(path, 0o644);
    Fs.writeFileSync(path, 'this is not a zlib stream');
}

describe('admin: cron tasks', () => {
    let context: TestServer;
    let admin: TestUser;
    const logged: string[] = [];

    before(async () => {
        context = await createTestServer(CRON_ENVIRONMENT);
        admin = await createTestUser(context.server, { name: 'root', admin: true });
        context.server.events.on('log', (event) => logged.push(`${event.tags.join(',')} ${String(event.data)}`));
        const owner = await createTestUser(context.server, { name: 'olga' });
        await repositories(context.server).create(owner.user, { name: 'healthy', auto_init: true }, owner.user);
        await repositories(context.server).create(owner.user, { name: 'broken', auto_init: true }, owner.user);
        // Broken for every test that looks: the health check and git gc find it so, and no test mends or removes it.
        corruptOneObject(Path.join(context.config.repositoriesDir, 'olga', 'broken.git'));
    });

    after(async () => {
        await context.cleanup();
    });

    const request = async (method: string, url: string, headers: Record<string, string> = admin.headers) =>
        await context.server.inject({ method, url: `/api/v1${url}`, headers });

    const listed = async (): Promise<ApiCron[]> => (await request('GET', '/admin/cron?limit=50')).result as ApiCron[];
    const execTimes = async (name: string) => {
        const task = (await listed()).find((entry) => entry.name === name);
        expect(task, name).to.exist();
        return task?.exec_times ?? 0;
    };
    const newestExecution = async (task: string) =>
        await context.database.knex('cron_executions').where({ task }).orderBy('id', 'desc').first();
    /** The id of the newest execution of any task, or 0: the executions a test makes come after it. */
    const lastExecutionId = async () => Number((await context.database.knex('cron_executions').max({ id: 'id' }).first())?.id ?? 0);

    it("lists Gitea's 28 tasks in its order with its schedules (disabled ones '-'), X-Total-Count and no Link", async () => {
        // A server of its own: the other tests run the tasks, and this one shows a task that has never run.
        const fresh = await createTestServer(CRON_ENVIRONMENT);
        try {
            const root = await createTestUser(fresh.server, { name: 'root', admin: true });
            const get = async (url: string) => await fresh.server.inject({ url: `/api/v1${url}`, headers: root.headers });
            const response = await get('/admin/cron');
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('adminCronList', 200, response.result)).to.equal([]);
            expect(response.headers['x-total-count']).to.equal('28');
            expect(response.headers.link).to.be.undefined();
            const tasks = response.result as ApiCron[];
            const overridden: Record<string, string> = { git_gc_repos: '@every 72h', cleanup_actions: '@every 1h' };
            const expected = GITEA_DEFAULTS.map(([name, schedule]) => [name, overridden[name] ?? schedule]);
            expect(tasks.map((task) => [task.name, task.schedule])).to.equal(expected);
            const health = tasks.find((task) => task.name === 'repo_health_check');
            expect(health).to.include({ prev: '0001-01-01T00:00:00Z', exec_times: 0 });
            expect(Date.parse(health?.next ?? '')).to.be.above(Date.now());
            const disabled = tasks.filter((task) => task.schedule === '-');
            expect(disabled.map((task) => task.next)).to.equal(disabled.map(() => '0001-01-01T00:00:00Z'));
            const second = await get('/admin/cron?page=2&limit=5');
            expect((second.result as ApiCron[]).map((task) => task.name)).to.equal(TASKS.slice(5, 10));
        } finally {
            await fresh.cleanup();
        }
    });

    it(
        'runs each task whose subject Gatehouse lacks by name (204), and records the run with the reason',
        { timeout: 240_000 },
        async () => {
            const before = Math.floor(Date.now() / 1000) * 1000;
            // Other tests run some of these tasks too: this one looks at its own runs.
            const after = await lastExecutionId();
            const ranBefore = new Map((await listed()).map((task) => [task.name, task.exec_times]));
            // At once: each runs in a worker of its own, and tasks of different names do not wait for each other.
            const names = Object.keys(ABSENT_SUBJECTS);
            const answers = await Promise.all(names.map((name) => request('POST', `/admin/cron/${name}`)));
            expect(answers.map((answer) => answer.statusCode)).to.equal(names.map(() => 204));

            const executions = await context.database
                .knex('cron_executions')
                .whereIn('task', Object.keys(ABSENT_SUBJECTS))
                .where('id', '>', after)
                .select('task', 'cause', 'status', 'message');
            expect(executions.map((execution: { task: string }) => execution.task).sort()).to.equal(Object.keys(ABSENT_SUBJECTS).sort());
            for (const execution of executions) {
                expect(execution, execution.task).to.include({ cause: 'manual', status: 'success' });
                expect(String(execution.message), execution.task).to.startWith('nothing to do here: ');
                expect(String(execution.message), execution.task).to.match(ABSENT_SUBJECTS[execution.task] as RegExp);
            }

            const shown = (await listed()).filter((task) => task.name in ABSENT_SUBJECTS);
            expect(shown.map((task) => task.exec_times)).to.equal(shown.map((task) => (ranBefore.get(task.name) ?? 0) + 1));
            expect(shown.every((task) => Date.parse(task.prev) >= before)).to.be.true();
        },
    );

    it('re-creates the git directory of a repository whose files are missing (reinit_missing_repos)', async () => {
        const owner = await createTestUser(context.server, { name: 'rita' });
        await repositories(context.server).create(owner.user, { name: 'lost', auto_init: true, default_branch: 'trunk' }, owner.user);
        const gitDir = Path.join(context.config.repositoriesDir, 'rita', 'lost.git');
        Fs.rmSync(gitDir, { recursive: true });
        try {
            expect((await request('POST', '/admin/cron/reinit_missing_repos')).statusCode).to.equal(204);
            expect(Fs.readFileSync(Path.join(gitDir, 'HEAD'), 'utf8')).to.equal('ref: refs/heads/trunk\n');
            const record = await context.database.knex('repositories').where({ lower_name: 'lost' }).first('is_empty');
            expect(Boolean(record.is_empty)).to.be.true();
            const [execution] = await context.database.knex('cron_executions').where({ task: 'reinit_missing_repos' });
            expect(execution).to.include({ status: 'success', message: 'reinitialized 1 repositories without files: rita/lost' });
        } finally {
            await context.database.knex('repositories').where({ lower_name: 'lost' }).delete();
            Fs.rmSync(gitDir, { recursive: true, force: true });
        }
    });

    it('keeps the newest 100 executions of a task', async () => {
        const knex = context.database.knex;
        const old = Array.from({ length: 120 }, (_, index) => ({
            task: 'update_checker',
            cause: 'schedule',
            holder: 'earlier',
            status: 'success',
            message: `old run ${index}`,
            started_at: index + 1,
        }));
        await knex.batchInsert('cron_executions', old, 50);
        expect((await request('POST', '/admin/cron/update_checker')).statusCode).to.equal(204);
        const kept = await knex('cron_executions').where({ task: 'update_checker' }).orderBy('id').pluck('message');
        expect(kept).to.have.length(100);
        expect(kept[0]).to.equal('old run 21');
        expect(String(kept[99])).to.startWith('nothing to do here: ');
    });

    it('runs the health check now (204), which finds the corrupted repository and records it', async () => {
        const knex = context.database.knex;
        const before = Date.now();
        const ranBefore = await execTimes('repo_health_check');
        const earlierNotices = await knex('system_notices').pluck('id');
        const recorded = Number((await knex('repositories').count({ count: '*' }).first())?.count);
        const response = await request('POST', '/admin/cron/repo_health_check');
        expect(response.statusCode).to.equal(204);
        const notices = await knex('system_notices').whereNotIn('id', earlierNotices).select('type', 'description');
        expect(notices).to.have.length(1);
        expect(notices[0].type).to.equal(1);
        expect(String(notices[0].description)).to.startWith('Failed to health check repository (olga/broken):');
        expect(await newestExecution('repo_health_check')).to.include({
            cause: 'manual',
            status: 'success',
            message: `checked ${recorded} repositories, 1 failed: olga/broken`,
        });
        const task = (await listed()).find((entry) => entry.name === 'repo_health_check');
        expect(task?.exec_times).to.equal(ranBefore + 1);
        expect(Date.parse(task?.prev ?? '')).to.be.at.least(Math.floor(before / 1000) * 1000);
    });

    it('records and logs a failing task with its reason, and still answers 204', async () => {
        const knex = context.database.knex;
        const earlierLines = logged.length;
        const earlierNotices = await knex('system_notices').pluck('id');
        expect((await request('POST', '/admin/cron/git_gc_repos')).statusCode).to.equal(204);
        const execution = await newestExecution('git_gc_repos');
        expect(execution.status).to.equal('failure');
        expect(execution.message).to.contain('olga/broken');
        expect(
            logged
                .slice(earlierLines)
                .some((line) => line.startsWith('error,cron') && line.includes('git_gc_repos failed') && line.includes('olga/broken')),
        ).to.be.true();
        const notices = await knex('system_notices').where({ type: 2 }).whereNotIn('id', earlierNotices);
        expect(notices).to.have.length(1);
        expect(String(notices[0].description)).to.startWith('Cron task git_gc_repos failed:');
    });

    it('does real work in the other tasks', async () => {
        const knex = context.database.knex;
        await knex('users').insert({
            lower_name: 'sleepy',
            name: 'sleepy',
            email: 'sleepy@example.com',
            is_active: false,
            type: 0,
            created_at: 1,
            updated_at: 1,
        });
        const owner = await createTestUser(context.server, { name: 'vera' });
        await repositories(context.server).create(owner.user, { name: 'vanished', auto_init: true }, owner.user);
        Fs.rmSync(Path.join(context.config.repositoriesDir, 'vera', 'vanished.git'), { recursive: true });
        await knex('repositories').where({ lower_name: 'healthy' }).update({ size: 1 });
        const after = await lastExecutionId();
        const tasks = [
            'delete_inactive_accounts',
            'delete_missing_repos',
            'check_repo_stats',
            'cleanup_hook_task_table',
            'cleanup_actions',
            'cancel_abandoned_jobs',
        ];
        for (const task of tasks) {
            expect((await request('POST', `/admin/cron/${task}`)).statusCode, task).to.equal(204);
        }

        expect(await knex('users').where({ lower_name: 'sleepy' })).to.equal([]);
        const names = await knex('repositories').pluck('lower_name');
        expect(names).to.include('healthy');
        expect(names).to.not.include('vanished');
        expect(Number((await knex('repositories').where({ lower_name: 'healthy' }).first('size')).size)).to.be.above(1);
        const executions = await knex('cron_executions').where('id', '>', after).select('task', 'status');
        expect(executions.map((execution: { task: string }) => execution.task).sort()).to.equal([...tasks].sort());
        expect(new Set(executions.map((execution: { status: string }) => execution.status))).to.equal(new Set(['success']));
    });

    it('deletes webhook deliveries that ended more than 168 hours ago (cleanup_hook_task_table)', async () => {
        const knex = context.database.knex;
        const at = Date.now();
        const [hookId] = await knex('webhooks').insert({
            is_system_webhook: true,
            type: 'gitea',
            url: 'http://127.0.0.1:9/hook',
            content_type: 'json',
            events: '[]',
            created_at: at,
            updated_at: at,
        });
        const delivery = (uuid: string, delivered: boolean, ageHours: number) => ({
            hook_id: hookId,
            uuid,
            event_type: 'repository',
            payload_content: '{}',
            is_delivered: delivered,
            next_attempt_at: at,
            created_at: at - ageHours * 3_600_000,
            delivered_at: delivered ? at - ageHours * 3_600_000 : null,
        });
        await knex('hook_tasks').insert([
            delivery('old-delivered', true, 169),
            delivery('recent', true, 167),
            delivery('old-pending', false, 169),
        ]);
        try {
            expect((await request('POST', '/admin/cron/cleanup_hook_task_table')).statusCode).to.equal(204);
            expect((await knex('hook_tasks').where({ hook_id: hookId }).pluck('uuid')).sort()).to.equal(['old-pending', 'recent']);
        } finally {
            await knex('webhooks').where({ id: hookId }).delete();
        }
    });

    it('does not start a task that is already running (204 at once, no new execution)', async () => {
        const knex = context.database.knex;
        const ranBefore = await execTimes('cleanup_packages');
        const after = await lastExecutionId();
        await knex('cron_tasks')
            .insert({ name: 'cleanup_packages', lease_holder: 'elsewhere', lease_expires_at: Date.now() + 60_000 })
            .onConflict('name')
            .merge();
        expect((await request('POST', '/admin/cron/cleanup_packages')).statusCode).to.equal(204);
        expect(await knex('cron_executions').where({ task: 'cleanup_packages' }).where('id', '>', after)).to.equal([]);
        expect(await execTimes('cleanup_packages')).to.equal(ranBefore);
    });

    it('answers 404 for an unknown task and 403 for non-administrators', async () => {
        const unknown = await request('POST', '/admin/cron/gc_lfs');
        expect(unknown.statusCode).to.equal(404);
        expect((unknown.result as { message: string }).message).to.equal('not found');
        const someone = await createTestUser(context.server, { name: 'sam' });
        expect((await request('GET', '/admin/cron', someone.headers)).statusCode).to.equal(403);
        expect((await request('POST', '/admin/cron/repo_health_check', someone.headers)).statusCode).to.equal(403);
    });

    it('keeps its records across a restart, and works through the gitea-js client', async () => {
        expect((await request('POST', '/admin/cron/update_checker')).statusCode).to.equal(204);
        const ran = await execTimes('update_checker');
        expect(ran).to.be.at.least(1);
        const restarted = await createTestServer({}, { dataDir: context.dataDir, database: context.database });
        try {
            await restarted.server.start();
            const api = giteaClient(restarted.server, admin);
            const tasks = (await api.admin.adminCronList({ limit: 50 })).data as ApiCron[];
            expect(tasks.find((task) => task.name === 'update_checker')?.exec_times).to.equal(ran);
            const cleared = tasks.find((task) => task.name === 'delete_old_system_notices')?.exec_times ?? 0;
            expect((await api.admin.adminCronRun('delete_old_system_notices')).status).to.equal(204);
            const after = (await api.admin.adminCronList({ limit: 50 })).data as ApiCron[];
            expect(after.find((task) => task.name === 'delete_old_system_notices')?.exec_times).to.equal(cleared + 1);
        } finally {
            await restarted.server.stop();
        }
    });
});

describe('admin: cron tasks at start', () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer({
            CRON_CHECK_REPO_STATS_RUN_AT_START: 'false',
            CRON_GIT_GC_REPOS_ENABLED: 'true',
            CRON_GIT_GC_REPOS_RUN_AT_START: 'true',
            // Gitea runs a task at start only when it is enabled.
            CRON_DELETE_OLD_SYSTEM_NOTICES_RUN_AT_START: 'true',
        });
    });

    after(async () => {
        await context.cleanup();
    });

    it(
        'runs the enabled tasks Gitea runs at start (and those configured so), once each, when the server starts',
        { timeout: 60_000 },
        async () => {
            const expected = [
                'archive_cleanup',
                'cancel_abandoned_jobs',
                'cleanup_packages',
                'deleted_branches_cleanup',
                'git_gc_repos',
                'stop_endless_tasks',
                'stop_zombie_tasks',
                'update_migration_poster_id',
            ];
            const ranAtStart = async () =>
                (
                    await context.database.knex('cron_executions').where({ cause: 'start' }).whereNot({ status: 'running' }).pluck('task')
                ).sort();
            await context.server.start();
            await waitUntil('the tasks run at start have ended', async () => (await ranAtStart()).length >= expected.length, {
                timeoutMs: 45_000,
                intervalMs: 100,
            });
            await context.server.stop();
            expect(await ranAtStart()).to.equal(expected);
        },
    );
});
