// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { waitUntil } from '../helpers/wait.ts';
import {
    checkAccessibility,
    openAdminPage,
    type PageProblems,
    screenshot,
    startWebServer,
    type WebServer,
    goLeavingUnsaved,
} from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** The draft the compose-step test adds its variable to. */
const APP = 'drafted';
/** The draft the secrets-step test gives its value to. */
const TO_FILL = 'drafted-to-fill';
/** The draft with its variable the tests of the unsaved-changes guards edit (and never save). */
const GREETED = 'drafted-greeted';

describe('web UI: a draft in the making, its variables asked for in order and its edits kept from a reload', { timeout: 300_000 }, () => {
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

    /** Waits until the page guards its unsaved changes (its effects run after the input that made them). */
    const guardHeld = async () =>
        await page.waitForFunction(() => {
            const probe = new Event('beforeunload', { cancelable: true });
            window.dispatchEvent(probe);
            return probe.defaultPrevented;
        });

    /** What the page's beforeunload asked while `leave` ran, the dialog answered with `accept`. */
    const askedBeforeUnload = async (accept: boolean, leave: () => Promise<unknown>): Promise<string[]> => {
        const asked: string[] = [];
        const answer = (dialog: { type(): string; accept(): Promise<void>; dismiss(): Promise<void> }) => {
            asked.push(dialog.type());
            void (accept ? dialog.accept() : dialog.dismiss());
        };
        page.once('dialog', answer);
        await leave();
        if (!accept) {
            await waitUntil('the page asks before it is left', () => asked.length > 0);
        }

        page.off('dialog', answer);
        return asked;
    };

    const go = async (url: string) => await goLeavingUnsaved(page, url);

    /** A draft at the nginx step whose compose file has GREETING=${GREETING} (added in the compose step's form) and no value for it. */
    const makeGreetedDraft = async (name: string) => {
        const created = await admin().post('/api/apps', { name, image: 'gatehouse-test/drafted' });
        expect(created.status, created.text).to.equal(201);
        expect((await admin().put(`/api/apps/${name}/draft`, { step: 'compose' })).status).to.equal(200);
        await go(`${web.baseUrl}/apps/new?app=${name}`);
        await stepHeading('Compose file').waitFor();
        await addGreeting();
        await page.getByRole('button', { name: /^Save and continue: nginx site$/ }).click();
        await stepHeading('nginx site').waitFor();
    };

    let greeted: Promise<void> | undefined;
    const haveGreeted = async () => await (greeted ??= makeGreetedDraft(GREETED));

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
        await go(`${web.baseUrl}/apps/new?app=${APP}`);
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
        await makeGreetedDraft(TO_FILL);
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

    it('asks before a reload or a closed tab loses a wizard step with changes not saved, and not without changes', async () => {
        await haveGreeted();
        await go(`${web.baseUrl}/apps/new?app=${GREETED}`);
        await page.getByRole('button', { name: /Compose file$/ }).click();
        await stepHeading('Compose file').waitFor();
        await composeForm().waitFor();
        expect(await askedBeforeUnload(true, () => page.reload())).to.equal([]);
        await stepHeading('Compose file').waitFor();

        await composeForm().getByRole('button', { name: 'Add a variable' }).click();
        await composeForm().getByLabel('Name of variable 2').fill('NOT_SAVED');
        await guardHeld();
        expect(await askedBeforeUnload(false, () => page.close({ runBeforeUnload: true }))).to.equal(['beforeunload']);
        expect(page.isClosed()).to.be.false();
        expect(await composeForm().getByLabel('Name of variable 2').inputValue()).to.equal('NOT_SAVED');

        expect(await askedBeforeUnload(true, () => page.reload())).to.equal(['beforeunload']);
        await stepHeading('Compose file').waitFor();
        await composeForm().waitFor();
        expect(await composeForm().getByLabel('Name of variable 2').count()).to.equal(0);
    });

    it("asks before a closed tab loses the app page's compose tab with changes not saved", async () => {
        await haveGreeted();
        await go(`${web.baseUrl}/apps/${GREETED}/compose`);
        await composeForm().waitFor();
        await composeForm().getByRole('button', { name: 'Add a variable' }).click();
        await composeForm().getByLabel('Name of variable 2').fill('NOT_SAVED');
        await guardHeld();
        expect(await askedBeforeUnload(false, () => page.close({ runBeforeUnload: true }))).to.equal(['beforeunload']);
        expect(await composeForm().getByLabel('Name of variable 2').inputValue()).to.equal('NOT_SAVED');
        expect(problems.list()).to.equal([]);
    });
});
