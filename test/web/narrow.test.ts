// needs: chromium
import * as Lab from '@hapi/lab';

import { ADMIN_ACCOUNT, checkNoSidewaysScroll, startWebServer, type WebServer } from './harness.ts';
import { seedApps, walkSignedInPages } from './page-walk.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;

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
        const apps = await seedApps(web);
        const { page, context } = await web.openBrowser();
        await web.signInBrowser(context, ADMIN_ACCOUNT.email, ADMIN_ACCOUNT.password);
        await walkSignedInPages(web, page, apps, checkNoSidewaysScroll);
    });
});
