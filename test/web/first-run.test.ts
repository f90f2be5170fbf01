// needs: chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import {
    checkAccessibility,
    checkNoSidewaysScroll,
    openAdminPage,
    type PageProblems,
    screenshot,
    startWebServer,
    watchPage,
    type WebServer,
} from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('web UI: first run', { timeout: 120_000 }, () => {
    /** A server no test sets up: the setup page's tests look at it as a fresh server is. */
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;
    /** The servers a test starts for itself (setting one up is for good). */
    const ownServers: WebServer[] = [];

    const openSetup = async (target: Page, server: WebServer) => {
        await target.goto(`${server.baseUrl}/setup`);
        await target.getByRole('heading', { name: 'Set up Gatehouse' }).waitFor();
    };

    before(async () => {
        web = await startWebServer({}, { setup: false });
        ({ page } = await web.openBrowser());
        problems = watchPage(page);
    });

    after(async () => {
        await Promise.allSettled([web, ...ownServers].map((server) => server?.stop()));
    });

    it("sends a fresh server's visitor to the setup page, which passes the accessibility check", async () => {
        await page.goto(`${web.baseUrl}/`);
        await page.getByRole('heading', { name: 'Set up Gatehouse' }).waitFor();
        expect(new URL(page.url()).pathname).to.equal('/setup');
        await page.getByText(Path.join(web.dataDir, 'setup-token'), { exact: true }).waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'setup');
        await checkNoSidewaysScroll(page);
        await page.setViewportSize({ width: 1280, height: 800 });
        expect(problems.list()).to.equal([]);
    });

    it('shows a wrong setup token next to the token field and creates nothing', async () => {
        await openSetup(page, web);
        await page.getByLabel('Setup token').fill('not-the-token');
        await page.getByLabel('E-mail').fill('first@example.com');
        await page.getByLabel('Name', { exact: false }).first().fill('First Admin');
        await page.getByLabel('Password').fill('first-admin-password');
        await page.getByRole('button', { name: 'Create the administrator' }).click();
        const error = page.locator('#' + (await page.getByLabel('Setup token').getAttribute('id')) + '-error');
        await error.waitFor();
        expect(await error.textContent()).to.equal('the setup token is not valid');
        expect(await web.context.database.knex('dp_users').count({ count: '*' }).first()).to.include({ count: 0 });
        expect(problems.list()).to.equal([]);
    });

    it('creates the first administrator with the token from the data folder and lands on the dashboard signed in', async () => {
        // On a server of its own: once set up, a server stays so.
        const fresh = await startWebServer({}, { setup: false });
        ownServers.push(fresh);
        const { page: own } = await fresh.openBrowser();
        const ownProblems = watchPage(own);
        await openSetup(own, fresh);
        const token = Fs.readFileSync(Path.join(fresh.dataDir, 'setup-token'), 'utf8').trim();
        await own.getByLabel('Setup token').fill(token);
        await own.getByLabel('E-mail').fill('first@example.com');
        await own.getByLabel('Name', { exact: false }).first().fill('First Admin');
        await own.getByLabel('Password').fill('first-admin-password');
        await own.getByRole('button', { name: 'Create the administrator' }).click();
        await own.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        expect(new URL(own.url()).pathname).to.equal('/');
        expect(await own.getByRole('banner').textContent()).to.contain('First Admin');
        expect(await own.getByRole('link', { name: 'Admin' }).count()).to.equal(1);
        expect(Fs.existsSync(Path.join(fresh.dataDir, 'setup-token'))).to.be.false();
        const users = await fresh.context.database.knex('dp_users').select('email', 'role');
        expect(users).to.equal([{ email: 'first@example.com', role: 'admin' }]);
        expect(ownProblems.list()).to.equal([]);
    });

    it('no longer offers setup once it is done', async () => {
        // A server of its own, set up (its first administrator made with its setup token) and signed in.
        const done = await startWebServer();
        ownServers.push(done);
        const { page: own, problems: ownProblems } = await openAdminPage(done);
        await own.goto(`${done.baseUrl}/setup`);
        await own.waitForURL((url) => url.pathname === '/');
        await own.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        expect(ownProblems.list()).to.equal([]);
    });
});
