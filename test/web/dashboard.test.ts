// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import { ADMIN_ACCOUNT, checkAccessibility, type PageProblems, screenshot, startWebServer, watchPage, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const STATES: Record<string, number> = { running: 5, stopped: 2, failed: 1, draft: 3 };
const RUN_STATES = ['succeeded', 'failed', 'succeeded', 'rolled back', 'succeeded', 'interrupted'];

/** Apps and runs written straight into the database, as a server that has been used for a while holds them. */
async function seed(web: WebServer): Promise<void> {
    const knex = web.context.database.knex;
    const now = Date.now();
    let port = 32000;
    const apps = Object.entries(STATES).flatMap(([state, count]) =>
        Array.from({ length: count }, (_, index) => {
            port += 1;
            const name = `${state}-app-${index + 1}`;
            return {
                name,
                title: `The ${state} app ${index + 1}`,
                domain: `${name}.apps.test`,
                state,
                host_port: port,
                draft: '{}',
                created_at: now,
                updated_at: now,
            };
        }),
    );
    await knex('dp_apps').insert(apps);
    for (let index = 0; index < 14; index += 1) {
        const running = index === 13;
        const startedAt = now - (14 - index) * 600_000;
        await knex('dp_runs').insert({
            app_name: apps[index % apps.length]?.name,
            kind: index % 3 === 0 ? 'restart' : 'deploy',
            state: running ? 'running' : RUN_STATES[index % RUN_STATES.length],
            started_at: startedAt,
            ended_at: running ? null : startedAt + 42_000,
        });
    }
}

describe('web UI: dashboard and apps list', { timeout: 120_000 }, () => {
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    before(async () => {
        web = await startWebServer();
        await seed(web);
        const browser = await web.openBrowser();
        page = browser.page;
        problems = watchPage(page);
        await web.signInBrowser(browser.context, ADMIN_ACCOUNT.email, ADMIN_ACCOUNT.password);
    });

    after(async () => {
        await web?.stop();
    });

    it('draws apps by state, the recent runs and the integrations, with no accessibility violation', async () => {
        await page.goto(`${web.baseUrl}/`);
        await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        const chart = page.getByRole('img', { name: /^Apps by state:/ });
        await chart.waitFor();
        expect(await chart.getAttribute('aria-label')).to.equal('Apps by state: 5 running, 2 stopped, 1 failed, 3 draft');
        expect(await page.locator('.state-bar').count()).to.equal(4);
        expect(String(await page.locator('.state-chart figcaption').textContent())).to.startWith('11 apps in all');

        const runs = page.getByRole('region', { name: 'Recent runs' }).getByRole('listitem');
        await runs.first().waitFor();
        expect(await runs.count()).to.equal(10);
        expect(await runs.first().textContent()).to.contain('running');

        const tiles = page.getByRole('region', { name: 'Integrations' }).getByRole('listitem');
        await tiles.first().waitFor({ timeout: 60_000 });
        expect(await tiles.count()).to.equal(7);
        const names = await page.locator('.health-name').allTextContents();
        expect(names).to.equal([
            'Docker engine',
            'nginx',
            'Certificates (ACME)',
            'Image registry',
            'DNS records',
            'Identity provider',
            'OIDC sign-in',
        ]);
        expect(await page.locator('.health-tile').filter({ hasText: 'Identity provider' }).textContent()).to.contain('Not set up');
        // No NGINX_CONF: nginx's default configuration, which does not include Gatehouse's sites folder.
        const nginxTile = page.locator('.health-tile').filter({ has: page.locator('.health-name', { hasText: /^nginx$/ }) });
        expect(await nginxTile.locator('.health-level').textContent()).to.equal('Problem');
        expect(await nginxTile.locator('.health-status').textContent()).to.equal("Does not include the apps' sites");

        await checkAccessibility(page);
        await screenshot(page, 'dashboard');
        await page.setViewportSize({ width: 390, height: 844 });
        await screenshot(page, 'dashboard-narrow');
        await page.setViewportSize({ width: 1280, height: 800 });
    });

    it('goes from a state in the chart to the apps in that state', async () => {
        await page.goto(`${web.baseUrl}/`);
        await page.locator('.state-chart figcaption').getByRole('link', { name: '1 failed' }).click();
        await page.getByRole('heading', { name: 'Apps', level: 1 }).waitFor();
        expect(new URL(page.url()).search).to.equal('?state=failed');
        await page.getByText('1 of 11 apps').waitFor();
        const rows = page.locator('.apps-table tbody tr');
        expect(await rows.count()).to.equal(1);
        expect(await rows.first().textContent()).to.contain('failed-app-1');
    });

    it('lists every app with its title, state badge and domain link, and filters them', async () => {
        await page.goto(`${web.baseUrl}/apps`);
        const rows = page.locator('.apps-table tbody tr');
        await rows.first().waitFor();
        expect(await rows.count()).to.equal(11);
        const running = rows.filter({ hasText: 'running-app-1' });
        expect(await running.locator('.badge').textContent()).to.equal('running');
        expect(await running.getByRole('link', { name: /running-app-1\.apps\.test/ }).getAttribute('href')).to.equal(
            'https://running-app-1.apps.test/',
        );
        // A draft has no site yet: its domain is shown, not linked.
        expect(
            await rows
                .filter({ hasText: 'draft-app-1' })
                .getByRole('link', { name: /apps\.test/ })
                .count(),
        ).to.equal(0);
        expect(await page.getByRole('link', { name: 'New app' }).count()).to.equal(1);
        await checkAccessibility(page);
        await screenshot(page, 'apps');

        await page.getByLabel('Search').fill('stopped');
        await page.getByText('2 of 11 apps').waitFor();
        await page.getByLabel('Search').fill('');
        await page.getByLabel('State').selectOption('running');
        await page.getByText('5 of 11 apps').waitFor();
        expect(new URL(page.url()).search).to.equal('?state=running');
    });

    it('shows an unknown page inside the layout', async () => {
        await page.goto(`${web.baseUrl}/no-such-page`);
        await page.getByRole('heading', { name: 'Page not found' }).waitFor();
        await page.getByRole('navigation', { name: 'Main' }).waitFor();
        await checkAccessibility(page);
        expect(problems.list()).to.equal([]);
    });
});
