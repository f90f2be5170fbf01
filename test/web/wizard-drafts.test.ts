// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { checkAccessibility, openAdminPage, type PageProblems, screenshot, startWebServer, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const APP = 'drafted';

describe('web UI: a draft in the making, its variables asked for in order', { timeout: 300_000 }, () => {
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    const admin = () => web.admin as Browser;
    const stepHeading = (name: string) => page.getByRole('heading', { level: 2, name });
    const composeForm = () => page.getByTestId('compose-model');

    /** Adds GREETING=${GREETING} to the first service through the form: a variable the secrets do not have. */
    const addGreeting = async () => {
        const form = composeForm();
        await form.waitFor();
        await form.getByRole('button', { name: 'Add a variable' }).click();
        await form.getByLabel('Name of variable 1').fill('GREETING');
        await form.getByLabel('Value of variable GREETING').fill('${GREETING}');
    };

    before({ timeout: 240_000 }, async () => {
        web = await startWebServer({ HUB_URL: 'http://127.0.0.1:9', HUB_REGISTRY_URL: 'http://127.0.0.1:9' });
        const created = await admin().post('/api/apps', { name: APP, image: 'gatehouse-test/drafted' });
        expect(created.status, created.text).to.equal(201);
        expect((await admin().put(`/api/apps/${APP}/draft`, { step: 'compose' })).status).to.equal(200);
        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await web?.stop();
    });

    it('says at the compose step that the secrets step asks for an unset ${VAR}, without calling it an error', async () => {
        await page.goto(`${web.baseUrl}/apps/new?app=${APP}`);
        await stepHeading('Compose file').waitFor();
        await addGreeting();
        const note = page.locator('.finding').filter({ hasText: '${GREETING} has no value yet: the Secrets step asks for it.' });
        await note.waitFor();
        expect(await note.getAttribute('class')).to.contain('finding-info');
        expect(await page.locator('.finding-error').filter({ hasText: 'GREETING' }).count()).to.equal(0);
        await checkAccessibility(page);
        await screenshot(page, 'wizard-compose-variable-later');

        await page.getByRole('button', { name: /^Save and continue: nginx site$/ }).click();
        await stepHeading('nginx site').waitFor();
        expect(((await admin().get(`/api/apps/${APP}`)).body as { app: { draft: { compose: string } } }).app.draft.compose).to.contain(
            '${GREETING}',
        );
    });

    it('reports the variable as an error at the secrets step while it has no value', async () => {
        await page.getByRole('button', { name: /Secrets$/ }).click();
        await stepHeading('Secrets').waitFor();
        const missing = page.locator('.secrets-missing .finding-error').filter({ hasText: 'GREETING has no value' });
        await missing.waitFor();
        await checkAccessibility(page);
        await page.getByRole('button', { name: 'Generate GREETING' }).click();
        await missing.waitFor({ state: 'detached' });
        await page.getByRole('button', { name: /^Save and continue: preview$/ }).click();
        await stepHeading('Preview').waitFor();
    });
});
