import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';

import { createKnex } from '../../../../../lib/database.ts';
import { apps } from '../../../../../plugins/deploy/domain/apps/app-service.ts';
import { type Browser, signIn } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Dashboard {
    apps: { total: number; byState: Record<string, number> };
    users: { total: number; disabled: number };
    recentRuns: Array<{ id: number; app: string; state: string; endedAt: string | null }>;
    runsInProgress: number;
}

interface Summary {
    name: string;
    title: string;
    state: string;
    lastRun: { id: number; state: string } | null;
}

interface AppPage {
    app: { name: string; title: string; state: string; draft: { secrets: Record<string, string> } };
}

/**
 * The dashboard, the apps list, an app's page and the session look-up are answered from memory while the tables they
 * read are unwritten (lib/read-cache.ts): these check that every write, by this server, by another server on the same
 * database or by a bare connection, shows in the next answer, and that no answer crosses from one role to another.
 */
describe('deploy manager: cached read paths stay right after writes', () => {
    let server: DeployTestServer;
    let viewer: Browser;
    let editor: Browser;
    /** A connection of its own on the same database, as another process or a SQL console writes. */
    let other: Knex;
    /** A second server on the same database with a connection of its own. */
    let second: TestServer;

    before(async () => {
        server = await deployTestServer();
        viewer = await server.signInAs('viewer');
        editor = await server.signInAs('editor');
        other = createKnex(server.context.database.databaseUrl);
        second = await createTestServer(
            {},
            { dataDir: server.context.dataDir, database: { ...server.context.database, knex: other, drop: async () => undefined } },
        );
    });

    after(async () => {
        await second.server.stop();
        await other.destroy();
        await server.context.cleanup();
    });

    async function dashboard(as: Browser = viewer): Promise<Dashboard> {
        const response = await as.get('/api/dashboard');
        expect(response.status, response.text).to.equal(200);
        return response.body as Dashboard;
    }

    async function list(as: Browser = viewer): Promise<Summary[]> {
        const response = await as.get('/api/apps');
        expect(response.status, response.text).to.equal(200);
        return (response.body as { apps: Summary[] }).apps;
    }

    async function page(name: string, as: Browser = viewer): Promise<AppPage['app']> {
        const response = await as.get(`/api/apps/${name}`);
        expect(response.status, response.text).to.equal(200);
        return (response.body as AppPage).app;
    }

    /** The deploy tables' queries the server's own connection sends while `work` runs. */
    async function deployQueriesDuring(work: () => Promise<unknown>): Promise<string[]> {
        const knex = server.context.server.app.knex;
        const queries: string[] = [];
        const onQuery = (query: { sql: string }) => queries.push(query.sql);
        knex.on('query', onQuery);
        try {
            await work();
        } finally {
            knex.removeListener('query', onQuery);
        }

        return queries.filter((sql) => /`dp_/.test(sql));
    }

    it('answers a repeated request without reading the deploy tables again', async () => {
        expect((await server.admin.post('/api/apps', { name: 'steady', image: 'nginx' })).status).to.equal(201);
        await Promise.all([dashboard(), list(), page('steady')]);
        const queries = await deployQueriesDuring(async () => await Promise.all([dashboard(), list(), page('steady')]));
        expect(queries).to.equal([]);
    });

    it('shows an app made through the API, its state changed by a bare connection, and a run that ends', async () => {
        const before = await dashboard();
        await list();
        expect((await editor.post('/api/apps', { name: 'fresh', image: 'nginx' })).status).to.equal(201);
        expect((await dashboard()).apps.total).to.equal(before.apps.total + 1);
        expect((await list()).map((app) => app.name)).to.include('fresh');
        expect((await page('fresh')).state).to.equal('draft');

        await other('dp_apps').where({ name: 'fresh' }).update({ state: 'stopped' });
        expect((await dashboard()).apps.byState.stopped).to.equal(1);
        expect((await list()).find((app) => app.name === 'fresh')?.state).to.equal('stopped');
        expect((await page('fresh')).state).to.equal('stopped');

        const [runId] = await other('dp_runs').insert({ app_name: 'fresh', kind: 'deploy', state: 'running', started_at: Date.now() });
        const running = await dashboard();
        expect(running.runsInProgress).to.equal(1);
        expect(running.recentRuns[0]).to.include({ id: Number(runId), app: 'fresh', state: 'running', endedAt: null });
        expect((await list()).find((app) => app.name === 'fresh')?.lastRun).to.include({ id: Number(runId), state: 'running' });

        await other('dp_runs').where({ id: runId }).update({ state: 'succeeded', ended_at: Date.now() });
        const ended = await dashboard();
        expect(ended.runsInProgress).to.equal(0);
        expect(ended.recentRuns[0]?.state).to.equal('succeeded');
        expect((await list()).find((app) => app.name === 'fresh')?.lastRun).to.include({ state: 'succeeded' });
    });

    it('counts a user added through the API, and one disabled by another server', async () => {
        const before = (await dashboard()).users;
        const created = await server.admin.post('/api/admin/users', {
            email: 'counted@example.com',
            name: 'Counted',
            password: 'user-password-1',
            role: 'viewer',
        });
        expect(created.status, created.text).to.equal(201);
        expect((await dashboard()).users).to.equal({ total: before.total + 1, disabled: before.disabled });

        await second.server.app.knex('dp_users').where({ email: 'counted@example.com' }).update({ disabled: true });
        expect((await dashboard()).users).to.equal({ total: before.total + 1, disabled: before.disabled + 1 });
    });

    it('shows what another server writes: an app it makes, a draft it saves, an app it removes', async () => {
        await Promise.all([dashboard(), list()]);
        await apps(second.server).create({ name: 'elsewhere', image: 'nginx', title: 'Made elsewhere' }, 1);
        expect((await list()).find((app) => app.name === 'elsewhere')?.title).to.equal('Made elsewhere');
        expect((await page('elsewhere')).title).to.equal('Made elsewhere');

        await apps(second.server).saveDraft('elsewhere', { title: 'Renamed elsewhere' });
        expect((await list()).find((app) => app.name === 'elsewhere')?.title).to.equal('Renamed elsewhere');
        expect((await page('elsewhere')).title).to.equal('Renamed elsewhere');

        const total = (await dashboard()).apps.total;
        await other('dp_apps').where({ name: 'elsewhere' }).delete();
        expect((await dashboard()).apps.total).to.equal(total - 1);
        expect((await list()).map((app) => app.name)).to.not.include('elsewhere');
        expect((await viewer.get('/api/apps/elsewhere')).status).to.equal(404);
    });

    it("never shows a viewer the secrets an editor's page opened, nor an editor the viewer's masked page", async () => {
        expect((await editor.post('/api/apps', { name: 'vault', image: 'nginx' })).status).to.equal(201);
        expect((await editor.put('/api/apps/vault/draft', { secrets: { API_KEY: 'kept-from-viewers' } })).status).to.equal(200);
        for (let round = 0; round < 2; round += 1) {
            expect((await page('vault', editor)).draft.secrets).to.equal({ API_KEY: 'kept-from-viewers' });
            const masked = await viewer.get('/api/apps/vault');
            expect(masked.text).to.not.contain('kept-from-viewers');
            expect((masked.body as AppPage).app.draft.secrets.API_KEY).to.equal('••••••••');
        }

        await second.server.app.knex('dp_apps').where({ name: 'vault' }).update({ title: 'Vault' });
        expect((await page('vault')).title).to.equal('Vault');
        expect((await viewer.get('/api/apps/vault')).text).to.not.contain('kept-from-viewers');
    });

    it('ends a session at once when another connection ends it or disables its user, or changes its role', async () => {
        const account = { email: 'short-lived@example.com', name: 'Short', password: 'user-password-1', role: 'editor' };
        expect((await server.admin.post('/api/admin/users', account)).status).to.equal(201);
        const person = await signIn(server.baseUrl, account.email, account.password);
        expect((await person.get('/api/auth/me')).status).to.equal(200);
        expect((await person.get('/api/dashboard')).status).to.equal(200);

        await other('dp_users').where({ email: account.email }).update({ role: 'viewer' });
        expect(((await person.get('/api/auth/me')).body as { user: { role: string } }).user.role).to.equal('viewer');
        expect((await person.post('/api/apps', { name: 'not-allowed', image: 'nginx' })).status).to.equal(403);

        await other('dp_users').where({ email: account.email }).update({ disabled: true });
        expect((await person.get('/api/dashboard')).status).to.equal(401);
        await other('dp_users').where({ email: account.email }).update({ disabled: false });
        const again = await signIn(server.baseUrl, account.email, account.password);
        expect((await again.get('/api/dashboard')).status).to.equal(200);

        const user = (await other('dp_users').where({ email: account.email }).first('id')) as { id: number };
        await other('dp_sessions').where({ user_id: user.id }).delete();
        expect((await again.get('/api/dashboard')).status).to.equal(401);
    });
});
