import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { repositories } from '../../../../../plugins/git/domain/repositories/repository-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

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

const TASKS = [
    'repo_health_check',
    'check_repo_stats',
    'cleanup_hook_task_table',
    'cleanup_packages',
    'delete_inactive_accounts',
    'git_gc_repos',
    'delete_missing_repos',
    'delete_old_system_notices',
    'stop_zombie_tasks',
    'stop_endless_tasks',
    'cancel_abandoned_jobs',
    'cleanup_actions',
];

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
        context = await createTestServer({ CRON_GIT_GC_REPOS_ENABLED: 'true', CRON_CLEANUP_ACTIONS_SCHEDULE: '@every 1h' });
        admin = await createTestUser(context.server, { name: 'root', admin: true });
        context.server.events.on('log', (event) => logged.push(`${event.tags.join(',')} ${String(event.data)}`));
        const owner = await createTestUser(context.server, { name: 'olga' });
        await repositories(context.server).create(owner.user, { name: 'healthy', auto_init: true }, owner.user);
        await repositories(context.server).create(owner.user, { name: 'broken', auto_init: true }, owner.user);
    });

    after(async () => {
        await context.cleanup();
    });

    const request = async (method: string, url: string, headers: Record<string, string> = admin.headers) =>
        await context.server.inject({ method, url: `/api/v1${url}`, headers });

    const listed = async (): Promise<ApiCron[]> => (await request('GET', '/admin/cron?limit=50')).result as ApiCron[];

    it("lists Gitea's tasks in order, disabled ones with schedule '-', with X-Total-Count and no Link", async () => {
        const response = await request('GET', '/admin/cron');
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('adminCronList', 200, response.result)).to.equal([]);
        expect(response.headers['x-total-count']).to.equal(String(TASKS.length));
        expect(response.headers.link).to.be.undefined();
        const tasks = response.result as ApiCron[];
        expect(tasks.map((task) => task.name)).to.equal(TASKS);
        expect(tasks[0]).to.include({ schedule: '@midnight', prev: '0001-01-01T00:00:00Z', exec_times: 0 });
        expect(Date.parse(tasks[0]?.next ?? '')).to.be.above(Date.now());
        expect(tasks.find((task) => task.name === 'delete_inactive_accounts')).to.include({ schedule: '-', next: '0001-01-01T00:00:00Z' });
        expect(tasks.find((task) => task.name === 'git_gc_repos')).to.include({ schedule: '@every 72h' });
        expect(tasks.find((task) => task.name === 'cleanup_actions')).to.include({ schedule: '@every 1h' });
        const second = await request('GET', '/admin/cron?page=2&limit=5');
        expect((second.result as ApiCron[]).map((task) => task.name)).to.equal(TASKS.slice(5, 10));
    });

    it('runs the health check now (204), which finds the corrupted repository and records it', async () => {
        corruptOneObject(Path.join(context.config.repositoriesDir, 'olga', 'broken.git'));
        const before = Date.now();
        const response = await request('POST', '/admin/cron/repo_health_check');
        expect(response.statusCode).to.equal(204);
        const notices = await context.database.knex('system_notices').select('type', 'description');
        expect(notices).to.have.length(1);
        expect(notices[0].type).to.equal(1);
        expect(String(notices[0].description)).to.startWith('Failed to health check repository (olga/broken):');
        const [execution] = await context.database.knex('cron_executions').where({ task: 'repo_health_check' });
        expect(execution).to.include({ cause: 'manual', status: 'success', message: 'checked 2 repositories, 1 failed: olga/broken' });
        const task = (await listed()).find((entry) => entry.name === 'repo_health_check');
        expect(task?.exec_times).to.equal(1);
        expect(Date.parse(task?.prev ?? '')).to.be.at.least(Math.floor(before / 1000) * 1000);
    });

    it('records and logs a failing task with its reason, and still answers 204', async () => {
        expect((await request('POST', '/admin/cron/git_gc_repos')).statusCode).to.equal(204);
        const [execution] = await context.database.knex('cron_executions').where({ task: 'git_gc_repos' });
        expect(execution.status).to.equal('failure');
        expect(execution.message).to.contain('olga/broken');
        expect(
            logged.some((line) => line.startsWith('error,cron') && line.includes('git_gc_repos failed') && line.includes('olga/broken')),
        ).to.be.true();
        const notices = await context.database.knex('system_notices').where({ type: 2 });
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
        Fs.rmSync(Path.join(context.config.repositoriesDir, 'olga', 'broken.git'), { recursive: true });
        await knex('repositories').where({ lower_name: 'healthy' }).update({ size: 1 });
        for (const task of [
            'delete_inactive_accounts',
            'delete_missing_repos',
            'check_repo_stats',
            'cleanup_hook_task_table',
            'cleanup_actions',
            'cancel_abandoned_jobs',
        ]) {
            expect((await request('POST', `/admin/cron/${task}`)).statusCode, task).to.equal(204);
        }

        expect(await knex('users').where({ lower_name: 'sleepy' })).to.equal([]);
        expect((await knex('repositories').pluck('lower_name')).sort()).to.equal(['healthy']);
        expect(Number((await knex('repositories').first('size')).size)).to.be.above(1);
        const statuses = await knex('cron_executions').whereNot({ task: 'git_gc_repos' }).pluck('status');
        expect(new Set(statuses)).to.equal(new Set(['success']));
    });

    it('does not start a task that is already running (204 at once, no new execution)', async () => {
        const knex = context.database.knex;
        await knex('cron_tasks')
            .insert({ name: 'cleanup_packages', lease_holder: 'elsewhere', lease_expires_at: Date.now() + 60_000 })
            .onConflict('name')
            .merge();
        expect((await request('POST', '/admin/cron/cleanup_packages')).statusCode).to.equal(204);
        expect(await knex('cron_executions').where({ task: 'cleanup_packages' })).to.equal([]);
        expect((await listed()).find((task) => task.name === 'cleanup_packages')?.exec_times).to.equal(0);
    });

    it('answers 404 for an unknown task and 403 for non-administrators', async () => {
        const unknown = await request('POST', '/admin/cron/update_mirrors');
        expect(unknown.statusCode).to.equal(404);
        expect((unknown.result as { message: string }).message).to.equal('not found');
        const someone = await createTestUser(context.server, { name: 'sam' });
        expect((await request('GET', '/admin/cron', someone.headers)).statusCode).to.equal(403);
        expect((await request('POST', '/admin/cron/repo_health_check', someone.headers)).statusCode).to.equal(403);
    });

    it('keeps its records across a restart, and works through the gitea-js client', async () => {
        const restarted = await createTestServer({}, { dataDir: context.dataDir, database: context.database });
        try {
            await restarted.server.start();
            const api = giteaClient(restarted.server, admin);
            const tasks = (await api.admin.adminCronList({ limit: 50 })).data as ApiCron[];
            expect(tasks.find((task) => task.name === 'repo_health_check')?.exec_times).to.equal(1);
            expect((await api.admin.adminCronRun('delete_old_system_notices')).status).to.equal(204);
            const after = (await api.admin.adminCronList({ limit: 50 })).data as ApiCron[];
            expect(after.find((task) => task.name === 'delete_old_system_notices')?.exec_times).to.equal(1);
        } finally {
            await restarted.server.stop();
        }
    });
});
