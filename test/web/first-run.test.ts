// needs: chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import {
    checkAccessibility,
    checkNoSidewaysScroll,
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
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    before(async () => {
        web = await startWebServer({}, { setup: false });
        ({ page } = await web.openBrowser());
        problems = watchPage(page);
    });

    after(async () => {
        await web?.stop();
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
    });

    it('shows a wrong setup token next to the token field and creates nothing', async () => {
        await page.getByLabel('Setup token').fill('not-the-token');
        await page.getByLabel('E-mail').fill('first@example.com');
        await page.getByLabel('Name', { exact: false }).first().fill('First Admin');
        await page.getByLabel('Password').fill('first-admin-password');
        await page.getByRole('button', { name: 'Create the administrator' }).click();
        const error = page.locator('#' + (await page.getByLabel('Setup token').getAttribute('id')) + '-error');
        await error.waitFor();
        expect(await error.textContent()).to.equal('the setup token is not valid');
        expect(await web.context.database.knex('dp_users').count({ count: '*' }).first()).to.include({ count: 0 });
    });

    it('creates the first administrator with the token from the data folder and lands on the dashboard signed in', async () => {
        const token = Fs.readFileSync(Path.join(web.dataDir, 'setup-token'), 'utf8').trim();
        await page.getByLabel('Setup token').fill(token);
        await page.getByRole('button', { name: 'Create the administrator' }).click();
        await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        expect(new URL(page.url()).pathname).to.equal('/');
        expect(await page.getByRole('banner').textContent()).to.contain('First Admin');
        expect(await page.getByRole('link', { name: 'Admin' }).count()).to.equal(1);
        expect(Fs.existsSync(Path.join(web.dataDir, 'setup-token'))).to.be.false();
        const users = await web.context.database.knex('dp_users').select('email', 'role');
        expect(users).to.equal([{ email: 'first@example.com', role: 'admin' }]);
    });

    it('no longer offers setup once it is done', async () => {
        await page.goto(`${web.baseUrl}/setup`);
        await page.waitForURL((url) => url.pathname === '/');
        await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        expect(problems.list()).to.equal([]);
    });
});
