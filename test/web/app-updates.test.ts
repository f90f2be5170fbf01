// needs: docker, chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { deployWithVolume, inApp, removeVolumes } from '../support/backup-app.ts';
import { buildWebImage, removeProjects } from '../support/images.ts';
import { type RunningServices, startServices } from '../support/services.ts';
import {
    checkAccessibility,
    openAdminPage,
    type PageProblems,
    runEnded,
    screenshot,
    startDeployingWebServer,
    type WebServer,
} from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const APP = `ledger-${SUFFIX}`;
/** The app the update test updates: APP stays on 1.0.0, with an update to offer, whatever order the tests run in. */
const UPDATED = `ledger2-${SUFFIX}`;

describe('web UI: updates of an app’s image', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;
    let repository: string;
    const images: string[] = [];

    const updatesUrl = (app = APP) => `${web.baseUrl}/apps/${app}/updates`;

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        repository = `${services.exports.REGISTRY_URL}/gatehouse-test/ledger-${SUFFIX}`;
        for (const version of ['1.0.0', '1.0.1', '2.0.0']) {
            images.push(buildWebImage(`${repository}:${version}`, `<h1>ledger ${version}</h1>\n`, true));
        }

        web = await startDeployingWebServer(services, { BACKUP_PASSWORD: `ledger-password-${SUFFIX}` });
        await deployWithVolume({ admin: web.admin as Browser }, APP, `${repository}:1.0.0`);
        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await removeProjects([APP, UPDATED], images);
        removeVolumes([APP, UPDATED]);
        await web?.stop();
        services?.stop();
    });

    it('lists the newer tags of the line on the Updates tab, other majors when asked', async () => {
        await page.goto(updatesUrl());
        await page.getByRole('heading', { level: 2, name: 'Updates' }).waitFor();
        const list = page.getByRole('list', { name: 'Updates, newest first' });
        await list.waitFor();
        expect(await list.locator('li').evaluateAll((items) => items.map((item) => item.getAttribute('data-tag')))).to.equal(['1.0.1']);
        expect(await list.textContent()).to.contain('patch');

        await page.getByLabel('Include other major versions').check();
        await list.locator('li[data-tag="2.0.0"]').waitFor();
        expect(await list.locator('li[data-tag="2.0.0"]').textContent()).to.contain('major');
        await page.getByLabel('Include other major versions').uncheck();
        await list.locator('li[data-tag="2.0.0"]').waitFor({ state: 'detached' });
        // How far the daily check updates the app by itself: chosen here, kept.
        const automatic = page.getByLabel('Automatic updates (checked daily)');
        expect(await automatic.inputValue()).to.equal('off');
        const savedPatch = page.waitForResponse((response) => response.url().endsWith('/updates/automatic') && response.status() === 200);
        await automatic.selectOption('patch');
        await savedPatch;
        await page.reload();
        await page.getByRole('list', { name: 'Updates, newest first' }).waitFor();
        expect(await page.getByLabel('Automatic updates (checked daily)').inputValue()).to.equal('patch');
        await checkAccessibility(page);
        await screenshot(page, 'app-updates-1-list');
        const savedOff = page.waitForResponse((response) => response.url().endsWith('/updates/automatic') && response.status() === 200);
        await page.getByLabel('Automatic updates (checked daily)').selectOption('off');
        await savedOff;
    });

    it('marks the app in the apps list and on the dashboard', async () => {
        // The lists mark what a check found: the daily one, or the Updates tab's, made here as the tab makes it.
        const checked = await (web.admin as Browser).get(`/api/apps/${APP}/updates`);
        expect(checked.status, checked.text).to.equal(200);
        await page.goto(`${web.baseUrl}/apps`);
        const mark = page.locator('tr', { hasText: APP }).getByText('update: 1.0.1');
        await mark.waitFor();
        await page.goto(`${web.baseUrl}/`);
        await page.locator('.dashboard-updates').getByText('update: 1.0.1').waitFor();
        await screenshot(page, 'app-updates-2-dashboard');
        await page
            .locator('.dashboard-updates')
            .getByRole('link', { name: /^update: 1\.0\.1/ })
            .click();
        await page.waitForURL(updatesUrl());
    });

    it('updates after asking, and the mark goes', async () => {
        await deployWithVolume({ admin: web.admin as Browser }, UPDATED, `${repository}:1.0.0`);
        inApp(UPDATED, 'echo kept > /data/state.txt');
        await page.goto(updatesUrl(UPDATED));
        await page.getByRole('button', { name: 'Update to 1.0.1' }).click();
        const question = page.getByRole('group', { name: 'Confirm: update to 1.0.1' });
        expect(await question.textContent()).to.contain('the old image and the data come back');
        await question.getByRole('button', { name: `Update ${UPDATED}` }).click();
        expect(await runEnded(page)).to.equal('succeeded');
        await page.getByText('No newer tag in the line of 1.0.1 at the registry.').waitFor();
        expect(inApp(UPDATED, 'cat /www/index.html')).to.equal('<h1>ledger 1.0.1</h1>');
        expect(inApp(UPDATED, 'cat /data/state.txt')).to.equal('kept');

        await page.goto(`${web.baseUrl}/apps`);
        await page.locator('tr', { hasText: UPDATED }).waitFor();
        expect(
            await page
                .locator('tr', { hasText: UPDATED })
                .getByText(/^update:/)
                .count(),
        ).to.equal(0);
        expect(problems.list()).to.equal([]);
    });

    it('shows a viewer the updates, with nothing to start', async () => {
        const viewer = await web.signInAs('viewer');
        await viewer.page.goto(`${updatesUrl()}`);
        // APP runs 1.0.0 and 1.0.1 is there: a viewer sees it, and nothing to start it with.
        await viewer.page.getByText(`Runs ${repository}:1.0.0`).waitFor();
        await viewer.page.getByRole('list', { name: 'Updates, newest first' }).locator('li[data-tag="1.0.1"]').waitFor();
        expect(await viewer.page.getByRole('button', { name: /^Update to / }).count()).to.equal(0);
        expect(await viewer.page.getByText('Automatic updates: Off: only by hand.').count()).to.equal(1);
    });
});
