import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Summary {
    name: string;
    title: string;
    state: string;
    image: string | null;
    tag: string;
    domain: string;
    url: string;
    method: string;
    access: string;
    lastRun: { id: number; app: string; kind: string; state: string; startedAt: string; endedAt: string | null } | null;
}

interface ListBody {
    apps: Summary[];
    total: number;
}

const SUMMARY_FIELDS = ['access', 'domain', 'image', 'lastRun', 'method', 'name', 'state', 'tag', 'title', 'url'];

describe('deploy manager: the apps list', () => {
    let server: DeployTestServer;
    let editor: Browser;
    let viewer: Browser;

    before(async () => {
        server = await deployTestServer();
        editor = await server.signInAs('editor');
        viewer = await server.signInAs('viewer');
        const knex = server.context.server.app.knex;
        // 12 apps: app-00 .. app-11; every third is running, the one after it stopped, the rest drafts.
        for (let index = 0; index < 12; index += 1) {
            const name = `app-${String(index).padStart(2, '0')}`;
            const title = index === 7 ? 'Team 100%_Wiki' : `App number ${index}`;
            const created = await editor.post('/api/apps', { name, image: index === 5 ? 'ghcr.io/example/shop' : 'nginx', title });
            expect(created.status, created.text).to.equal(201);
            const state = index % 3 === 0 ? 'running' : index % 3 === 1 ? 'stopped' : 'draft';
            await knex('dp_apps').where({ name }).update({ state });
        }

        const saved = await editor.put('/api/apps/app-04/draft', { account: 'basic', secrets: { DB_PASSWORD: 'list-secret-value' } });
        expect(saved.status, saved.text).to.equal(200);
        const startedAt = Date.UTC(2026, 0, 1);
        for (const [offset, app] of ['app-03', 'app-03', 'app-06'].entries()) {
            await knex('dp_runs').insert({
                app_name: app,
                kind: 'deploy',
                state: 'succeeded',
                error: 'an error only the run page shows',
                started_at: startedAt + offset * 60_000,
                ended_at: startedAt + offset * 60_000 + 30_000,
            });
        }
    });

    after(async () => {
        await server.context.cleanup();
    });

    it('answers a summary per app, without the draft, secrets or identity', async () => {
        const response = await viewer.get('/api/apps?limit=50');
        expect(response.status, response.text).to.equal(200);
        const body = response.body as ListBody;
        expect(body.total).to.equal(12);
        expect(body.apps.map((app) => app.name)).to.equal(
            Array.from({ length: 12 }, (_, index) => `app-${String(index).padStart(2, '0')}`),
        );
        for (const app of body.apps) {
            expect(Object.keys(app).sort()).to.equal(SUMMARY_FIELDS);
        }

        expect(body.apps[5]).to.include({
            name: 'app-05',
            title: 'App number 5',
            state: 'draft',
            image: 'ghcr.io/example/shop',
            tag: 'latest',
            domain: 'app-05.localhost',
            url: 'https://app-05.localhost/',
            method: '',
            access: 'public',
            lastRun: null,
        });
        expect(body.apps[4]?.method).to.equal('basic');
        expect(body.apps[3]?.lastRun).to.equal({
            id: 2,
            app: 'app-03',
            kind: 'deploy',
            state: 'succeeded',
            startedAt: '2026-01-01T00:01:00Z',
            endedAt: '2026-01-01T00:01:30Z',
        });
        expect(body.apps[6]?.lastRun?.id).to.equal(3);
        for (const heavy of [
            '"draft":',
            'services:',
            '"secrets":',
            '"identity":',
            '"hostPort":',
            'list-secret-value',
            'only the run page',
        ]) {
            expect(response.text).to.not.contain(heavy);
        }
    });

    it('pages as the git API does: page and limit, X-Total-Count and Link', async () => {
        const first = await viewer.get('/api/apps?limit=5');
        expect(first.status).to.equal(200);
        expect((first.body as ListBody).apps.map((app) => app.name)).to.equal(['app-00', 'app-01', 'app-02', 'app-03', 'app-04']);
        expect(first.headers.get('x-total-count')).to.equal('12');
        const link = first.headers.get('link') ?? '';
        expect(link).to.contain('page=2>; rel="next"');
        expect(link).to.contain('page=3>; rel="last"');

        const last = await viewer.get('/api/apps?limit=5&page=3');
        expect((last.body as ListBody).apps.map((app) => app.name)).to.equal(['app-10', 'app-11']);
        expect(last.headers.get('link')).to.contain('rel="prev"');
        expect((await viewer.get('/api/apps?limit=5&page=4')).body).to.equal({ apps: [], total: 12 });

        // Gitea's rules: no limit is 30, a limit above 50 is 50, a page that is not a number is the first.
        expect(((await viewer.get('/api/apps')).body as ListBody).apps.length).to.equal(12);
        expect(((await viewer.get('/api/apps?limit=2&page=x')).body as ListBody).apps.map((app) => app.name)).to.equal([
            'app-00',
            'app-01',
        ]);
    });

    it('filters by state and by text (name, title, domain or image, any case), counting what matches', async () => {
        const running = await viewer.get('/api/apps?state=running&limit=2');
        expect((running.body as ListBody).apps.map((app) => app.name)).to.equal(['app-00', 'app-03']);
        expect(running.headers.get('x-total-count')).to.equal('4');
        expect((running.body as ListBody).total).to.equal(4);

        const byImage = (await viewer.get('/api/apps?q=GHCR.io')).body as ListBody;
        expect(byImage.apps.map((app) => app.name)).to.equal(['app-05']);
        const byTitle = (await viewer.get('/api/apps?q=number%201')).body as ListBody;
        expect(byTitle.apps.map((app) => app.name)).to.equal(['app-01', 'app-10', 'app-11']);
        // The LIKE wildcards are taken literally.
        expect(((await viewer.get('/api/apps?q=100%25_')).body as ListBody).apps.map((app) => app.name)).to.equal(['app-07']);
        expect(((await viewer.get('/api/apps?q=_')).body as ListBody).total).to.equal(1);
        expect(((await viewer.get('/api/apps?q=app-1&state=stopped')).body as ListBody).apps.map((app) => app.name)).to.equal(['app-10']);
        expect((await viewer.get('/api/apps?state=nothing')).body).to.equal({ apps: [], total: 0 });
    });

    it('refuses filters it does not know with a 422 in its own error shape', async () => {
        for (const query of ['state=Running%3B', 'colour=blue', `q=${'x'.repeat(256)}`]) {
            const response = await viewer.get(`/api/apps?${query}`);
            expect(response.status, query).to.equal(422);
            expect(Object.keys(response.body as object), query).to.equal(['error']);
        }
    });
});
