// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { checkAccessibility, openAdminPage, type PageProblems, screenshot, startWebServer, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** No recipe and no evidence: nothing decides, so the app keeps its own login. */
const PLAIN = { name: 'plain', image: 'gatehouse-test/plain' };
/** Gitea: a recipe (OpenID Connect), and evidence for auto-login too, which is not the first choice when single sign-on is known. */
const FORGE = { name: 'forge', image: 'gitea/gitea' };
/** IT-Tools: its recipe turns its login off, so "no login in the app" is offered. */
const TOOLS = { name: 'tools', image: 'corentinth/it-tools' };
/** Gitea again, for the test that saves its sign-in step (the draft then moves on to the access step). */
const FORGE_SAVED = { name: 'forge-saved', image: FORGE.image };

describe('web UI: the sign-in chooser, as a new user reads it', { timeout: 300_000 }, () => {
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    const openWizard = async (app: string) => {
        await page.goto(`${web.baseUrl}/apps/new?app=${app}`);
        await page.getByRole('group', { name: 'Single sign-on through the identity provider' }).waitFor();
    };
    const showAll = async () => {
        const button = page.getByRole('button', { name: /^Show all methods/ });
        if ((await button.count()) > 0) {
            await button.click();
        }
    };

    before({ timeout: 240_000 }, async () => {
        web = await startWebServer({
            // Docker Hub and its registry are not reachable from the tests: a closed loopback port stands for them.
            HUB_URL: 'http://127.0.0.1:9',
            HUB_REGISTRY_URL: 'http://127.0.0.1:9',
        });
        for (const app of [PLAIN, FORGE, TOOLS, FORGE_SAVED]) {
            const created = await (web.admin as Browser).post('/api/apps', app);
            expect(created.status, created.text).to.equal(201);
        }

        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await web?.stop();
    });

    it("offers the app's own login once, chosen when nothing else decides", async () => {
        await openWizard(PLAIN.name);
        await showAll();
        const ownLogin = page.getByRole('radio', { name: /own login/i });
        expect(await ownLogin.count()).to.equal(1);
        expect(await ownLogin.isChecked()).to.be.true();
        expect(await page.getByText('Not chosen yet').count()).to.equal(0);
    });

    it('explains every method in one sentence, those behind "Show all methods" too', async () => {
        await openWizard(PLAIN.name);
        await showAll();
        const rows = page.locator('li.method[data-method]');
        expect(await rows.count()).to.be.at.least(6);
        for (const row of await rows.all()) {
            const method = await row.getAttribute('data-method');
            const explanation = (await row.locator('.method-explanation').textContent()) ?? '';
            expect(explanation, `${method}`).to.match(/^\S[^.]+\.$/);
            expect(await row.locator('.method-explanation').isVisible(), `${method}`).to.be.true();
        }

        await checkAccessibility(page);
    });

    it("offers no login in the app only where the app's recipe turns its login off (the API refuses it elsewhere)", async () => {
        await openWizard(PLAIN.name);
        await showAll();
        expect(await page.locator('li.method[data-method="none"]').count()).to.equal(0);
        await openWizard(FORGE.name);
        await showAll();
        expect(await page.locator('li.method[data-method="none"]').count()).to.equal(0);

        await openWizard(TOOLS.name);
        await page.locator('li.method[data-method="none"]').waitFor();
        expect(await page.locator('li.method[data-method="none"] .badge').first().textContent()).to.contain('documented');
    });

    it('shows every method with evidence with its badge at once, not behind "Show all methods"', async () => {
        await openWizard(FORGE.name);
        const autologin = page.locator('li.method[data-method="autologin"]');
        await autologin.waitFor();
        expect(await autologin.isVisible()).to.be.true();
        expect(await autologin.locator('.badge').first().textContent()).to.match(/documented|found|tested/);
        // What stays behind "Show all methods" has no evidence at all.
        const hidden = page.locator('[id$="-more"] li.method');
        for (const row of await hidden.all()) {
            expect(await row.locator('.badge').count(), `${await row.getAttribute('data-method')}`).to.equal(0);
        }

        await screenshot(page, 'sign-in-chooser-evidence');
    });

    it("chooses the auto-login adapter from the server's adapters, not typed", async () => {
        const listed = await (web.admin as Browser).get('/api/sso/autologin-adapters');
        expect(listed.status).to.equal(200);
        const adapters = (listed.body as { adapters: Array<{ name: string; title: string }> }).adapters;
        expect(adapters.map((adapter) => adapter.name)).to.include(['form', 'status-monitor']);

        await openWizard(FORGE_SAVED.name);
        await page.locator('li.method[data-method="autologin"]').getByRole('radio').check();
        const select = page.getByRole('combobox', { name: 'How Gatehouse signs in to the app' });
        await select.waitFor();
        const choices = await select.locator('option').allTextContents();
        expect(choices.slice(1)).to.equal(adapters.map((adapter) => adapter.title));
        expect(await page.getByRole('textbox', { name: /adapter/i }).count()).to.equal(0);
        await select.selectOption('status-monitor');
        await page.getByLabel('Shared account: user name').fill('kiosk');
        await checkAccessibility(page);
        await page.getByRole('button', { name: /^Save and continue/ }).click();
        await page.getByRole('heading', { level: 2, name: 'Access and admin account' }).waitFor();
        const saved = (await (web.admin as Browser).get(`/api/apps/${FORGE_SAVED.name}`)).body as {
            app: { draft: { account: string; login?: { adapter: string } } };
        };
        expect(saved.app.draft.account).to.equal('autologin');
        expect(saved.app.draft.login?.adapter).to.equal('status-monitor');
        expect(problems.list()).to.equal([]);
    });
});
