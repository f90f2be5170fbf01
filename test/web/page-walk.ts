/**
 * Every signed-in page of the web UI, each tab and section, for the tests that look at all of them (the width at a
 * phone's size, the words shown): a deployed-looking app and a draft with long names, and the visits in order.
 */
import type { Page } from 'playwright-core';

import { waitUntil } from '../helpers/wait.ts';
import type { WebServer } from './harness.ts';

export const APP_TABS = ['status', 'logs', 'resources', 'runs', 'files', 'account', 'access', 'compose', 'nginx', 'terminal', 'delete'];
export const ADMIN_SECTIONS = ['users', 'audit', 'oidc', 'idp', 'system'];

export interface SeededApps {
    running: string;
    draft: string;
}

/** A deployed-looking app and a draft, written straight into the database, with long names as people give them. */
export async function seedApps(web: WebServer): Promise<SeededApps> {
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

interface Visit {
    path: string;
    ready: () => Promise<unknown>;
}

function signedInVisits(page: Page, { running, draft }: SeededApps): Visit[] {
    return [
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
}

/** Opens each signed-in page in turn, lets what loads after the heading arrive, then runs `check` on it. */
export async function walkSignedInPages(web: WebServer, page: Page, apps: SeededApps, check: (page: Page) => Promise<void>): Promise<void> {
    for (const visit of signedInVisits(page, apps)) {
        await page.goto(`${web.baseUrl}${visit.path}`);
        await visit.ready();
        await waitUntil(`${visit.path} has loaded`, async () => (await page.locator('[aria-busy="true"], .spinner').count()) === 0, {
            timeoutMs: 20_000,
        });
        await check(page);
    }
}
