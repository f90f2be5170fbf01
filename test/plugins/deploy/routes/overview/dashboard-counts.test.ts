import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('deploy manager: the dashboard counts in SQL', () => {
    let server: DeployTestServer;
    let viewer: Browser;

    before(async () => {
        server = await deployTestServer();
        viewer = await server.signInAs('viewer');
    });

    after(async () => {
        await server.context.cleanup();
    });

    it('counts apps by state and users, reading no app or user whole', async () => {
        const knex = server.context.server.app.knex;
        const states: Record<string, string> = { one: 'running', two: 'running', three: 'stopped', four: 'failed', five: 'draft' };
        for (const [name, state] of Object.entries(states)) {
            expect((await server.admin.post('/api/apps', { name, image: 'nginx' })).status).to.equal(201);
            await knex('dp_apps').where({ name }).update({ state });
        }

        const secrets = await server.admin.put('/api/apps/one/draft', { secrets: { TOKEN: 'dashboard-secret' } });
        expect(secrets.status).to.equal(200);
        const editor = await server.signInAs('editor');
        const me = (await editor.get('/api/auth/me')).body as { user: { id: number } };
        expect((await server.admin.put(`/api/admin/users/${me.user.id}`, { disabled: true })).status).to.equal(200);
        await knex('dp_runs').insert({ app_name: 'one', kind: 'deploy', state: 'failed', error: 'the run page says why', started_at: 1 });

        const queries: string[] = [];
        const onQuery = (query: { sql: string }) => queries.push(query.sql);
        knex.on('query', onQuery);
        const response = await viewer.get('/api/dashboard');
        knex.removeListener('query', onQuery);

        expect(response.status).to.equal(200);
        const body = response.body as { apps: unknown; users: unknown; recentRuns: Array<Record<string, unknown>>; runsInProgress: number };
        expect(body.apps).to.equal({ total: 5, byState: { running: 2, stopped: 1, failed: 1, draft: 1 } });
        expect(body.users).to.equal({ total: 3, disabled: 1 });
        expect(body.recentRuns).to.equal([
            { id: 1, app: 'one', kind: 'deploy', state: 'failed', startedAt: '1970-01-01T00:00:00Z', endedAt: null },
        ]);
        expect(body.runsInProgress).to.equal(0);
        expect(response.text).to.not.contain('the run page says why');

        const dashboardQueries = queries.filter((sql) => /`dp_(apps|users|runs)`/.test(sql));
        expect(dashboardQueries.length).to.be.above(0);
        for (const sql of dashboardQueries) {
            expect(sql, sql).to.not.contain('select *');
        }
    });
});
