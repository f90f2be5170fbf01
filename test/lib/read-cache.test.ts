import Fs from 'node:fs';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { DataVersions, ReadCache } from '../../lib/read-cache.ts';
import { actionRuns } from '../../plugins/git/domain/actions/action-run-service.ts';
import { STATUS as RUN_STATUS } from '../../plugins/git/domain/actions/status.ts';
import { organizations } from '../../plugins/git/domain/orgs/org-service.ts';
import { repositories } from '../../plugins/git/domain/repositories/repository-service.ts';
import {
    createTestServer,
    createTestUser,
    freePort,
    ON_MYSQL,
    startServerProcess,
    type TestServer,
    waitForHealth,
} from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const WATCHED = [
    'access_tokens',
    'action_runs',
    'dp_app_resources',
    'dp_apps',
    'dp_recipes',
    'dp_run_events',
    'dp_runs',
    'dp_sessions',
    'dp_users',
    'instance_settings',
    'issues',
    'notifications',
    'org_users',
    'repositories',
    'users',
];

async function triggerNames(primary: TestServer): Promise<string[]> {
    const { knex } = primary.database;
    const rows: Array<{ name: string }> = ON_MYSQL
        ? (await knex.raw('SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()'))[0]
        : await knex('sqlite_master').where({ type: 'trigger' }).select('name');
    return rows.map((row) => row.name).sort();
}

async function counter(primary: TestServer, table: string): Promise<number> {
    const row = await primary.database.knex('data_versions').where({ name: table }).first('version');
    return Number(row?.version);
}

describe('read caches kept fresh by write counters', () => {
    // Two servers on one database, as two processes behind a load balancer would be: what one writes, the other reads.
    let primary: TestServer;
    let secondary: TestServer;

    before(async () => {
        primary = await createTestServer();
        secondary = await createTestServer({}, { dataDir: primary.dataDir, database: primary.database });
    });

    after(async () => {
        await secondary.server.stop();
        await primary.cleanup();
    });

    const get = async (testServer: TestServer, url: string, headers: object) => {
        const response = await testServer.server.inject({
            method: 'GET',
            url: `/api/v1${url}`,
            headers: headers as Record<string, string>,
        });
        return { statusCode: response.statusCode, body: JSON.parse(response.payload || 'null'), headers: response.headers };
    };

    it('has an insert, update and delete trigger on every watched table, each bumping that table only', async () => {
        const expected = WATCHED.flatMap((table) => ['delete', 'insert', 'update'].map((event) => `${table}_${event}_version`)).sort();
        expect(await triggerNames(primary)).to.equal(expected);

        const { knex } = primary.database;
        const before = { users: await counter(primary, 'users'), tokens: await counter(primary, 'access_tokens') };
        const [id] = await knex('users').insert({
            lower_name: 'counted',
            name: 'counted',
            email: 'counted@example.com',
            created_at: 1,
            updated_at: 1,
        });
        expect(await counter(primary, 'users')).to.equal(before.users + 1);
        await knex('users').where({ id }).update({ full_name: 'Counted' });
        expect(await counter(primary, 'users')).to.equal(before.users + 2);
        await knex('users').where({ id }).delete();
        expect(await counter(primary, 'users')).to.equal(before.users + 3);
        expect(await counter(primary, 'access_tokens')).to.equal(before.tokens);
    });

    it('refuses a token at once on every server once its record is deleted, by any writer', async () => {
        const holder = await createTestUser(primary.server, { name: 'tokenholder' });
        expect((await get(secondary, '/notifications/new', holder.headers)).statusCode).to.equal(200);
        expect((await get(secondary, '/notifications/new', holder.headers)).statusCode).to.equal(200);

        await primary.database.knex('access_tokens').where({ uid: holder.user.id }).delete();
        expect((await get(secondary, '/notifications/new', holder.headers)).statusCode).to.equal(401);
    });

    it('applies an account change to a cached token at once: a user made inactive is refused', async () => {
        const member = await createTestUser(primary.server, { name: 'soonidle' });
        expect((await get(secondary, '/notifications/new', member.headers)).statusCode).to.equal(200);
        await primary.database.knex('users').where({ id: member.user.id }).update({ is_active: false });
        expect((await get(secondary, '/notifications/new', member.headers)).statusCode).to.equal(403);
    });

    it('shows users created, edited and deleted elsewhere in the next admin search', async () => {
        const admin = await createTestUser(primary.server, { name: 'searchadmin', admin: true });
        const search = async () => {
            const { statusCode, body, headers } = await get(secondary, '/admin/users?q=freshling', admin.headers);
            expect(statusCode).to.equal(200);
            return {
                names: (body as Array<{ login: string; full_name: string }>).map((user) => `${user.login}:${user.full_name}`),
                total: headers['x-total-count'],
            };
        };

        expect(await search()).to.equal({ names: [], total: '0' });
        const created = await primary.server.inject({
            method: 'POST',
            url: '/api/v1/admin/users',
            headers: admin.headers,
            payload: { username: 'freshling', email: 'freshling@example.com', password: 'long-enough-password' },
        });
        expect(created.statusCode).to.equal(201);
        expect(await search()).to.equal({ names: ['freshling:'], total: '1' });

        await primary.database.knex('users').where({ lower_name: 'freshling' }).update({ full_name: 'Fresh Ling' });
        expect(await search()).to.equal({ names: ['freshling:Fresh Ling'], total: '1' });

        await primary.database.knex('users').where({ lower_name: 'freshling' }).delete();
        expect(await search()).to.equal({ names: [], total: '0' });
    });

    it('lists a private organisation to a user as soon as they are made a member', async () => {
        const founder = await createTestUser(primary.server, { name: 'founder' });
        const joiner = await createTestUser(primary.server, { name: 'joiner' });
        const org = await organizations(primary.server).create(
            founder.user,
            { username: 'hidden-club', visibility: 'private' },
            founder.user,
        );
        const names = async () =>
            ((await get(secondary, '/orgs?limit=50', joiner.headers)).body as Array<{ name: string }>).map((o) => o.name);

        expect(await names()).to.not.include('hidden-club');
        await primary.database.knex('org_users').insert({ org_id: org.id, uid: joiner.user.id, is_public: false });
        expect(await names()).to.include('hidden-club');
    });

    it('shows notification threads as their status and issues change elsewhere', async () => {
        const owner = await createTestUser(primary.server, { name: 'threadowner' });
        const reporter = await createTestUser(primary.server, { name: 'reporter' });
        await repositories(primary.server).create(owner.user, { name: 'watched', private: false }, owner.user);
        const opened = await primary.server.inject({
            method: 'POST',
            url: '/api/v1/repos/threadowner/watched/issues',
            headers: reporter.headers,
            payload: { title: 'First title' },
        });
        expect(opened.statusCode).to.equal(201);
        const threads = async () => (await get(secondary, '/notifications', owner.headers)).body as Array<{ subject: { title: string } }>;

        expect((await threads()).map((thread) => thread.subject.title)).to.equal(['First title']);
        await primary.database.knex('issues').update({ title: 'Second title' });
        expect((await threads()).map((thread) => thread.subject.title)).to.equal(['Second title']);
        await primary.database.knex('notifications').where({ user_id: owner.user.id }).update({ status: 2 });
        expect(await threads()).to.equal([]);
    });

    it('lists a run as soon as it is recorded, and its new status after an update', async () => {
        const admin = await createTestUser(primary.server, { name: 'runadmin', admin: true });
        const repo = await repositories(primary.server).create(admin.user, { name: 'pipelines' }, admin.user);
        const list = async () =>
            (
                (await get(secondary, '/admin/actions/runs?status=completed', admin.headers)).body as {
                    workflow_runs: Array<{ id: number }>;
                }
            ).workflow_runs.map((run) => run.id);
        const before = await list();

        const id = await actionRuns(primary.server).createRun({
            repo,
            workflowId: 'ci.yml',
            title: 'Cached?',
            event: 'push',
            ref: 'refs/heads/main',
            commitSha: 'd'.repeat(40),
            triggerUser: admin.user,
            jobs: [{ name: 'build', runsOn: ['ubuntu-latest'], status: RUN_STATUS.running, started: Date.now() }],
        });
        expect(await list()).to.equal(before);
        await primary.database.knex('action_runs').where({ id }).update({ status: RUN_STATUS.success });
        expect(await list()).to.equal([id, ...before]);
    });

    it('sees a write made by another process at once (a real server process on the same database)', async () => {
        const admin = await createTestUser(primary.server, { name: 'processadmin', admin: true });
        const port = await freePort();
        const child = startServerProcess({
            PORT: String(port),
            HOST: '127.0.0.1',
            DATA_DIR: primary.dataDir,
            DATABASE_URL: primary.database.databaseUrl,
            LOG_LEVEL: 'silent',
        });
        try {
            await waitForHealth(port, child);
            const search = async () => {
                const response = await fetch(`http://127.0.0.1:${port}/api/v1/admin/users?q=crossproc`, { headers: admin.headers });
                return {
                    status: response.status,
                    names: response.ok ? ((await response.json()) as Array<{ login: string }>).map((u) => u.login) : [],
                };
            };

            expect(await search()).to.equal({ status: 200, names: [] });
            await createTestUser(primary.server, { name: 'crossproc' });
            expect(await search()).to.equal({ status: 200, names: ['crossproc'] });
            await primary.database.knex('access_tokens').where({ uid: admin.user.id }).delete();
            expect((await search()).status).to.equal(401);
        } finally {
            child.child.kill('SIGTERM');
            await child.exited;
        }
    });
});

describe('ReadCache', () => {
    let testServer: TestServer;
    const opened: DataVersions[] = [];
    const versions = (): DataVersions => {
        const made = new DataVersions(testServer.database.knex);
        opened.push(made);
        return made;
    };

    before(async () => {
        testServer = await createTestServer();
        await createTestUser(testServer.server, { name: 'bump' });
    });

    after(async () => {
        opened.forEach((made) => made.close());
        await testServer.cleanup();
    });

    const counting = (value: string) => {
        const calls = { count: 0 };
        return { calls, load: async () => ((calls.count += 1), { value }) };
    };

    it('loads once while its tables are unwritten, and again after a write to one of them', async () => {
        const cache = new ReadCache<{ value: string }>(versions(), ['users'], 10);
        const { calls, load } = counting('a');
        expect(await cache.get('k', load)).to.equal({ value: 'a' });
        expect(await cache.get('k', load)).to.equal({ value: 'a' });
        expect(calls.count).to.equal(1);

        await testServer.database.knex('access_tokens').update({ name: 'renamed' });
        await cache.get('k', load);
        expect(calls.count).to.equal(1);

        await testServer.database.knex('users').where({ lower_name: 'bump' }).update({ full_name: 'Bumped' });
        await cache.get('k', load);
        expect(calls.count).to.equal(2);
    });

    it("reuses a request's snapshot of the counters until this process writes, its own writes included", async () => {
        const shared = versions();
        const asOf = await shared.snapshot();
        expect(await shared.since(asOf)).to.shallow.equal(asOf.versions);

        await testServer.database.knex('users').where({ lower_name: 'bump' }).update({ full_name: 'Written after the snapshot' });
        const after = await shared.since(asOf);
        expect(after).to.not.shallow.equal(asOf.versions);
        expect(Number(after.get('users'))).to.be.above(Number(asOf.versions.get('users')));

        const cache = new ReadCache<string>(shared, ['users'], 10);
        await cache.get('k', async () => 'loaded under the snapshot', await shared.snapshot());
        await testServer.database.knex('users').where({ lower_name: 'bump' }).update({ full_name: 'Written again' });
        expect(await cache.get('k', async () => 'loaded after the write', asOf)).to.equal('loaded after the write');
    });

    it('does not keep what it loaded while a write landed: the next caller loads again', async () => {
        const cache = new ReadCache<string>(versions(), ['users'], 10);
        const racing = async () => {
            await testServer.database.knex('users').where({ lower_name: 'bump' }).update({ full_name: 'during the load' });
            return 'read before the write';
        };
        expect(await cache.get('k', racing)).to.equal('read before the write');
        expect(await cache.get('k', async () => 'read after the write')).to.equal('read after the write');
    });

    it('forgets the least recently used entry beyond its capacity, and keeps nothing at capacity 0', async () => {
        const shared = versions();
        const cache = new ReadCache<{ value: string }>(shared, ['users'], 2);
        const a = counting('a');
        await cache.get('a', a.load);
        await cache.get('b', async () => ({ value: 'b' }));
        await cache.get('a', a.load);
        await cache.get('c', async () => ({ value: 'c' }));
        await cache.get('a', a.load);
        expect(a.calls.count).to.equal(1);
        const b = counting('b');
        await cache.get('b', b.load);
        expect(b.calls.count).to.equal(1);

        const off = new ReadCache<{ value: string }>(shared, ['users'], 0);
        const z = counting('z');
        await off.get('z', z.load);
        await off.get('z', z.load);
        expect(z.calls.count).to.equal(2);
    });

    it('hands out frozen values, so no caller can change what the next one gets', async () => {
        const cache = new ReadCache<{ list: Array<{ name: string }> }>(versions(), ['users'], 10);
        const value = await cache.get('k', async () => ({ list: [{ name: 'original' }] }));
        expect(() => {
            (value.list[0] as { name: string }).name = 'changed';
        }).to.throw(TypeError);
        expect((await cache.get('k', async () => ({ list: [] }))).list[0]?.name).to.equal('original');
    });

    it('fails loudly for a table without a write counter', async () => {
        const cache = new ReadCache<string>(versions(), ['dp_audit'], 10);
        await expect(cache.get('k', async () => 'never')).to.reject(Error, 'table dp_audit has no write counter in data_versions');
    });

    /** Queries other than the write counters' that three admin searches make. */
    async function searchQueries(target: TestServer, name: string): Promise<number> {
        const admin = await createTestUser(target.server, { name, admin: true });
        let queries = 0;
        const count = (query: { sql: string }) => {
            queries += /data_versions/.test(query.sql) ? 0 : 1;
        };
        target.database.knex.on('query', count);
        try {
            for (let round = 0; round < 3; round += 1) {
                const response = await target.server.inject({ url: `/api/v1/admin/users?q=${name}`, headers: admin.headers });
                expect(response.statusCode).to.equal(200);
                expect((JSON.parse(response.payload) as Array<{ login: string }>).map((user) => user.login)).to.equal([name]);
            }
        } finally {
            target.database.knex.off('query', count);
        }

        return queries;
    }

    it('answers repeated requests from memory, and READ_CACHE_ENTRIES=0 makes every request read the database', async () => {
        // The token with its user, the count and the page: three queries, once with the caches, every time without.
        expect(await searchQueries(testServer, 'cached')).to.equal(3);
        const uncached = await createTestServer({ READ_CACHE_ENTRIES: '0' });
        try {
            expect(await searchQueries(uncached, 'uncached')).to.equal(9);
        } finally {
            await uncached.cleanup();
        }

        expect(Fs.existsSync(uncached.dataDir)).to.be.false();
    });
});
