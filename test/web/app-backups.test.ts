// needs: docker, chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { backupsOf, deployWithVolume, inApp, removeVolumes } from '../support/backup-app.ts';
import { buildWebImage, removeProjects } from '../support/images.ts';
import { type RunningServices, startServices } from '../support/services.ts';
import { runToEnd } from '../support/sse.ts';
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
const APP = `vault-${SUFFIX}`;
// The tests that restore or remove a backup do it on apps of their own: APP keeps its one backup for the others.
const RESTORED = `vault-restored-${SUFFIX}`;
const REMOVED = `vault-removed-${SUFFIX}`;
const APPS = [APP, RESTORED, REMOVED];

describe('web UI: the app page’s backups and their schedule', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let web: WebServer;
    let admin: Browser;
    let page: Page;
    let problems: PageProblems;
    let image: string;

    const backupsUrl = (app = APP) => `${web.baseUrl}/apps/${app}/backups`;
    const rows = () => page.getByRole('table', { name: 'Backups, newest first' }).locator('tbody tr');

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/vault-web:${SUFFIX}`, '<h1>vault</h1>\n', true);
        web = await startDeployingWebServer(services, { BACKUP_PASSWORD: `vault-password-${SUFFIX}` });
        admin = web.admin as Browser;
        await deployWithVolume({ admin }, APP, image);
        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await removeProjects(APPS, [image]);
        removeVolumes(APPS);
        await web?.stop();
        services?.stop();
    });

    /**
     * APP's first backup, made from its Backups tab by whichever test first needs it (each passes alone, in any order):
     * the tab says there is none yet, then lists the one made. What the tab showed is kept for the test of it.
     */
    const backUpFirst = async () => {
        inApp(APP, 'echo "first words" > /data/words.txt');
        await page.goto(backupsUrl());
        await page.getByRole('heading', { level: 2, name: 'Backups' }).waitFor();
        await page.getByText('No backup yet.').waitFor();

        await page.getByRole('button', { name: 'Back up now' }).click();
        const ended = await runEnded(page);
        await rows().first().waitFor();
        return { ended, count: await rows().count(), row: await rows().first().textContent() };
    };
    let firstBackup: ReturnType<typeof backUpFirst> | undefined;
    const haveBackedUp = () => (firstBackup ??= backUpFirst());

    it('backs the app up from its Backups tab and lists what the backup holds and why it was made', async () => {
        const { ended, count, row } = await haveBackedUp();
        expect(ended).to.equal('succeeded');
        expect(count).to.equal(1);
        expect(row).to.contain('manual');
        expect(row).to.contain(`folder, site, volume ${APP}_data`);
        expect(row).to.match(/\d+(\.\d+)? (B|KB|MB)/);
        // The list as the backup left it (APP's backups are only ever this one), whatever the page showed since.
        await page.goto(backupsUrl());
        await rows().first().waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'app-backups-1-list');
    });

    it('restores a backup after asking, and the data written since is replaced by the backup’s', async () => {
        await deployWithVolume({ admin }, RESTORED, image);
        inApp(RESTORED, 'echo "first words" > /data/words.txt');
        const backedUp = await runToEnd(admin, await admin.post(`/api/apps/${RESTORED}/backups`));
        expect(backedUp.state, backedUp.text).to.equal('succeeded');
        inApp(RESTORED, 'echo "overwritten" > /data/words.txt');
        await page.goto(backupsUrl(RESTORED));
        await rows().first().waitFor();
        const [backup] = await backupsOf(admin, RESTORED);
        await page.getByRole('button', { name: /^Restore the backup of / }).click();
        const question = page.getByRole('group', { name: /^Confirm: restore the backup of / });
        expect(await question.textContent()).to.contain('visitors get an error meanwhile');
        await screenshot(page, 'app-backups-2-restore-asked');
        await question.getByRole('button', { name: `Restore ${RESTORED}` }).click();
        expect(await runEnded(page)).to.equal('succeeded');
        expect(inApp(RESTORED, 'cat /data/words.txt')).to.equal('first words');

        // What the restore replaced was backed up first, and is listed above the one restored.
        await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 2);
        expect(await rows().first().textContent()).to.contain('before restore');
        expect(await rows().nth(1).getAttribute('data-backup')).to.equal(String(backup?.id));
    });

    it('removes a backup after asking; Cancel removes nothing', async () => {
        await deployWithVolume({ admin }, REMOVED, image);
        for (const _ of [1, 2]) {
            const backedUp = await runToEnd(admin, await admin.post(`/api/apps/${REMOVED}/backups`));
            expect(backedUp.state, backedUp.text).to.equal('succeeded');
        }

        await page.goto(backupsUrl(REMOVED));
        await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 2);
        const removeButtons = page.getByRole('button', { name: /^Remove the backup of / });
        await removeButtons.first().click();
        await page.getByRole('button', { name: 'Cancel' }).click();
        expect(await rows().count()).to.equal(2);

        await removeButtons.first().click();
        const question = page.getByRole('group', { name: /^Confirm: remove the backup of / });
        expect(await question.textContent()).to.contain('can no longer be restored');
        await question.getByRole('button', { name: 'Remove the backup' }).click();
        await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
        expect((await backupsOf(admin, REMOVED)).map((backup) => backup.reason)).to.equal(['manual']);
        expect(problems.list()).to.equal([]);
    });

    it('shows when the app is backed up by schedule, and saves an own schedule an editor chooses', async () => {
        const scheduleOf = async () => (await admin.get(`/api/apps/${APP}/backups/schedule`)).body as { schedule: string | null };
        await page.goto(backupsUrl());
        const section = page.getByRole('region', { name: 'Backup schedule' });
        // The test servers' BACKUP_SCHEDULE is off.
        await section.getByText('Not backed up by schedule').waitFor();
        const choices = section.getByRole('group', { name: 'Backup schedule' });
        expect(await choices.getByRole('radio', { name: 'Follow the default (off)' }).isChecked()).to.be.true();

        // A schedule Bree would not take is refused, saying why, and nothing is saved.
        await choices.getByRole('radio', { name: 'Own schedule' }).check();
        await section.getByLabel('Cron expression').fill('every night');
        await section.getByRole('button', { name: 'Save the schedule' }).click();
        await section.getByText(/must be a cron expression/i).waitFor();
        expect((await scheduleOf()).schedule).to.equal(null);

        await section.getByLabel('Cron expression').fill('0 4 * * 1');
        await section.getByRole('button', { name: 'Save the schedule' }).click();
        await section.getByText('Backed up by schedule at 0 4 * * 1').waitFor();
        expect((await scheduleOf()).schedule).to.equal('0 4 * * 1');
        await checkAccessibility(page);
        await screenshot(page, 'app-backups-0-own-schedule');

        // As saved when the page is opened again; back to the default.
        await page.reload();
        await section.getByText('Backed up by schedule at 0 4 * * 1').waitFor();
        expect(await choices.getByRole('radio', { name: 'Own schedule' }).isChecked()).to.be.true();
        expect(await section.getByLabel('Cron expression').inputValue()).to.equal('0 4 * * 1');
        await choices.getByRole('radio', { name: 'Follow the default (off)' }).check();
        await section.getByRole('button', { name: 'Save the schedule' }).click();
        await section.getByText('Not backed up by schedule').waitFor();
        expect((await scheduleOf()).schedule).to.equal(null);
    });

    it('shows a viewer the list, with nothing to start', async () => {
        await haveBackedUp();
        const viewer = await web.signInAs('viewer');
        await viewer.page.goto(backupsUrl());
        await viewer.page.getByRole('table', { name: 'Backups, newest first' }).locator('tbody tr').first().waitFor();
        expect(await viewer.page.getByRole('button', { name: 'Back up now' }).count()).to.equal(0);
        expect(await viewer.page.getByRole('button', { name: /^(Restore|Remove) the backup/ }).count()).to.equal(0);
        expect(await viewer.page.getByRole('columnheader', { name: 'Actions' }).count()).to.equal(0);
        // The schedule is shown, not offered to change.
        await viewer.page
            .getByRole('region', { name: 'Backup schedule' })
            .getByText(/backed up by schedule/i)
            .waitFor();
        expect(await viewer.page.getByRole('radio').count()).to.equal(0);
    });
});
