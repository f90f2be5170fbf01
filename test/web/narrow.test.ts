// needs: chromium
import * as Lab from '@hapi/lab';

import { waitUntil } from '../helpers/wait.ts';
import { ADMIN_ACCOUNT, checkNoSidewaysScroll, startWebServer, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;

const APP_TABS = ['status', 'logs', 'runs', 'files', 'account', 'access', 'compose', 'nginx', 'delete'];
const ADMIN_SECTIONS = ['users', 'audit', 'oidc', 'idp', 'system'];

/** A deployed-looking app and a draft, written straight into the database, with long names as people give them. */
async function seedApps(web: WebServer): Promise<{ running: string; draft: string }> {
    const now = Date.now();
    const suffix = Math.random().toString(36).slice(2, 8);
    const running = `a-rather-long-application-name-${suffix}`;
    const draft = `draft-${suffix}`;
    await web.context.database.knex('dp_apps').insert(
        [
            { name: running, state: 'running', host_port: 32101 },
            { name: draft, state: 'draft', host_port: 32102 },
        ].map((app) => ({
            ...app,
            title: `The ${app.name} app with a title that goes on`,
            domain: `${app.name}.apps.example-with-a-long-domain.test`,
            draft: '{}',
            created_at: now,
            updated_at: now,
        })),
    );
    await web.context.database.knex('dp_runs').insert({
        app_name: running,
        kind: 'deploy',
        state: 'succeeded',
        started_at: now - 60_000,
        ended_at: now - 30_000,
    });
    return { running, draft };
}

describe('web UI: every page at a phone width (390 px) fits without scrolling sideways', { timeout: 180_000 }, () => {
    let web: WebServer;

    before(async () => {
        web = await startWebServer();
    });

    after(async () => {
        await web?.stop();
    });

    it('the signed-out pages: sign-in and the two-factor code', async () => {
        const { page } = await web.openBrowser();
        await page.goto(`${web.baseUrl}/sign-in`);
        await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
        await checkNoSidewaysScroll(page);
        await page.goto(`${web.baseUrl}/sign-in/mfa`);
        await page.getByRole('heading', { name: 'Two-factor code', level: 1 }).waitFor();
        await checkNoSidewaysScroll(page);
    });

    it('the signed-in pages, each tab and section', async () => {
        const { running, draft } = await seedApps(web);
        const { page, context } = await web.openBrowser();
        await web.signInBrowser(context, ADMIN_ACCOUNT.email, ADMIN_ACCOUNT.password);
        const visits: { path: string; ready: () => Promise<unknown> }[] = [
            { path: '/', ready: () => page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor() },
            {
                path: '/apps',
                ready: () =>
                    page
                        .getByRole('link', { name: new RegExp(running) })
                        .first()
                        .waitFor(),
            },
            { path: '/apps/new', ready: () => page.getByRole('heading', { name: 'New app', level: 1 }).waitFor() },
            { path: `/apps/${draft}`, ready: () => page.getByRole('heading', { level: 1 }).waitFor() },
            ...APP_TABS.map((tab) => ({
                path: `/apps/${running}/${tab}`,
                ready: () => page.getByRole('heading', { level: 1, name: new RegExp(running) }).waitFor(),
            })),
            { path: '/recipes', ready: () => page.locator('tr[data-recipe]').first().waitFor() },
            {
                path: '/account',
                ready: () => page.getByRole('region', { name: 'Where you are signed in' }).getByRole('listitem').first().waitFor(),
            },
            ...ADMIN_SECTIONS.map((section) => ({
                path: `/admin/${section}`,
                ready: () => page.getByRole('navigation', { name: 'Administration sections' }).waitFor(),
            })),
            { path: '/no-such-page', ready: () => page.getByRole('heading', { level: 1 }).waitFor() },
        ];
        for (const visit of visits) {
            await page.goto(`${web.baseUrl}${visit.path}`);
            await visit.ready();
            // Let what loads after the heading (lists, tables, health) arrive before measuring.
            await waitUntil(`${visit.path} has loaded`, async () => (await page.locator('[aria-busy="true"], .spinner').count()) === 0, {
                timeoutMs: 20_000,
            });
            await checkNoSidewaysScroll(page);
        }
    });
});
