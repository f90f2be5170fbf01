// needs: docker, chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';
import type { Page, Request } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { appHostPorts } from '../helpers/server.ts';
import { buildWebImage, removeProjects } from '../support/images.ts';
import { type RunningServices, startServices } from '../support/services.ts';
import { runToEnd } from '../support/sse.ts';
import { ADMIN_ACCOUNT, checkAccessibility, type PageProblems, screenshot, startWebServer, watchPage, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `notebook-${Math.random().toString(36).slice(2, 8)}`;
/** The app the delete test deploys for itself and deletes. */
const DOOMED = `${APP}-doomed`;
const RUN_TIMEOUT_MS = 240_000;

describe('web UI: the app page, from its status to its deletion', { timeout: 900_000 }, () => {
    let services: RunningServices;
    let web: WebServer;
    let admin: Browser;
    let page: Page;
    let problems: PageProblems;
    const images: string[] = [];
    const engine = new Docker();

    const appUrl = (tab = '') => `${web.baseUrl}/apps/${APP}${tab ? `/${tab}` : ''}`;
    const panel = (name: string) => page.getByRole('heading', { level: 2, name }).waitFor();
    const runEnded = async (target: Page = page) => {
        await target.locator('.run-log').last().waitFor();
        await target.locator('.run-log:not([data-state="running"])').last().waitFor({ timeout: RUN_TIMEOUT_MS });
        return await target.locator('.run-log').last().getAttribute('data-state');
    };
    const container = async () => await engine.getContainer(`${APP}-web-1`).inspect();
    const draftOf = async (name = APP) =>
        (
            (await admin.get(`/api/apps/${name}`)).body as {
                app: { draft: { compose: string; composeEditor?: string; secrets: Record<string, string> } };
            }
        ).app.draft;

    /** Creates and deploys an app of the notes image, its secret GREETING=hello-notebook and a volume for its data. */
    const deployApp = async (name: string) => {
        const registry = services.exports.REGISTRY_URL;
        const created = await admin.post('/api/apps', { name, image: `${registry}/gatehouse-test/notes`, tag: '1' });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = [
            'services:',
            '  web:',
            `    image: ${registry}/gatehouse-test/notes:1`,
            '    restart: unless-stopped',
            '    environment:',
            '      GREETING: ${GREETING}',
            '    ports:',
            `      - "127.0.0.1:${port}:80"`,
            '    volumes:',
            '      - data:/data',
            'volumes:',
            '  data: {}',
            '',
        ].join('\n');
        const saved = await admin.put(`/api/apps/${name}/draft`, {
            compose,
            secrets: { GREETING: 'hello-notebook' },
            auth: { access: 'public' },
        });
        expect(saved.status, saved.text).to.equal(200);
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${name}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
    };

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        const registry = services.exports.REGISTRY_URL;
        images.push(buildWebImage(`${registry}/gatehouse-test/notes:1`, '<h1>notes v1</h1>\n', true));
        images.push(buildWebImage(`${registry}/gatehouse-test/notes:2`, '<h1>notes v2</h1>\n', true));
        const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
        web = await startWebServer({
            ...withoutAcme,
            BASE_DOMAIN,
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            HUB_URL: 'http://127.0.0.1:9',
            HUB_REGISTRY_URL: 'http://127.0.0.1:9',
        });
        admin = web.admin as Browser;
        await deployApp(APP);

        const browser = await web.openBrowser();
        page = browser.page;
        problems = watchPage(page);
        await web.signInBrowser(browser.context, ADMIN_ACCOUNT.email, ADMIN_ACCOUNT.password);
    });

    after(async () => {
        await removeProjects([APP, DOOMED], images);
        for (const name of [APP, DOOMED]) {
            await engine
                .getVolume(`${name}_data`)
                .remove()
                .catch(() => undefined);
        }

        await web?.stop();
        services?.stop();
    });

    it('shows the status: containers, health, the probe through nginx and the certificate', async () => {
        await page.goto(appUrl());
        await page.getByRole('heading', { level: 1, name: /^notebook/ }).waitFor();
        const row = page.getByRole('table', { name: 'Containers' }).locator('tr[data-service="web"]');
        await row.waitFor();
        expect(await row.textContent()).to.contain('running');
        expect(await page.locator('li[data-probe="HTTPS"]').textContent()).to.match(/HTTPS: 200 in \d+ ms/);
        expect(await page.locator('.certificate').textContent()).to.match(/expires .*\(\d+ days? left\)/);
        await checkAccessibility(page);
        await screenshot(page, 'app-1-status');
    });

    it('shows the logs, the runs with their logs, and the files', async () => {
        await page.goto(appUrl());
        await page.getByRole('link', { name: 'Logs', exact: true }).click();
        await page.waitForURL(appUrl('logs'));
        const logLines = page.getByLabel('Log lines');
        await logLines.locator('.log-line[data-service="web"]').first().waitFor();
        expect(await page.getByRole('status').filter({ hasText: 'Following live.' }).count()).to.equal(1);

        // A line the container writes now shows up without a reload.
        const mark = `live-line-${Date.now()}`;
        const write = async (text: string) => {
            const exec = await engine.getContainer(`${APP}-web-1`).exec({ Cmd: ['sh', '-c', `echo ${text} > /proc/1/fd/1`] });
            await exec.start({ Detach: true });
        };
        await write(mark);
        await logLines.getByText(mark).waitFor();

        // Paused, a new line waits; resumed, it arrives, once.
        await page.getByRole('button', { name: 'Pause' }).click();
        await page.getByRole('status').filter({ hasText: 'Paused.' }).waitFor();
        const waiting = `${mark}-after-pause`;
        await write(waiting);
        expect(await logLines.getByText(waiting).count()).to.equal(0);
        await page.getByRole('button', { name: 'Resume' }).click();
        await logLines.getByText(waiting).waitFor();
        // The line before the pause and the one after, each once (the resume starts from the last line's second).
        expect(await logLines.locator('.log-line', { hasText: mark }).count()).to.equal(2);

        // The search keeps the lines that have it.
        await page.getByLabel('Search').fill(waiting);
        await page
            .getByRole('status')
            .filter({ hasText: /^Following live\. 1 of \d+ lines shown\.$/ })
            .waitFor();
        expect(await logLines.locator('.log-line').count()).to.equal(1);
        await page.getByLabel('Search').fill('');
        await checkAccessibility(page);
        await screenshot(page, 'app-2-logs');

        await page.getByRole('link', { name: 'Runs', exact: true }).click();
        // The oldest run, the first deploy (the tests that change the app add runs above it).
        const run = page.locator('tr[data-run]').last();
        await run.waitFor();
        expect(await run.textContent()).to.contain('deploy');
        await run.getByRole('button', { name: /^Show the log of run/ }).click();
        expect(await runEnded()).to.equal('succeeded');
        expect(await page.locator('.run-line-step').allTextContents()).to.include('containers');
        await checkAccessibility(page);
        await screenshot(page, 'app-3-runs');

        await page.getByRole('link', { name: 'Files', exact: true }).click();
        const secrets = page.locator('.file-view[data-kind="secrets"]');
        await secrets.waitFor();
        await secrets.locator('summary').click();
        // Administrators see the app's secrets as they are (the secret's test changes the value).
        expect(await secrets.locator('pre').textContent()).to.equal(`GREETING=${(await draftOf()).secrets.GREETING}\n`);
        await checkAccessibility(page);
        await screenshot(page, 'app-4-files');
    });

    it('shows the account card and the access (public: no identity provider is connected)', async () => {
        await page.goto(appUrl('account'));
        await panel('Sign-in');
        await page.getByText('No method chosen').waitFor();
        await page.getByText(/^The sign-in has not been checked yet|^Last sign-in check/).waitFor();
        await page.getByRole('button', { name: 'Change the method' }).click();
        await page.getByRole('group', { name: "The app's own login (not single sign-on)" }).waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'app-5-sign-in');

        await page.getByRole('link', { name: 'Access', exact: true }).click();
        await page.getByText('Public: no identity provider stands in front of it.').waitFor();
        await page.locator('.access-groups .error-text').waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'app-6-access');
    });

    it('changes the compose file in the model editor and deploys it, the run followed live', async () => {
        await page.goto(appUrl('compose'));
        const form = page.getByTestId('compose-model');
        await form.waitFor();
        const imageField = form.getByRole('textbox', { name: 'Image', exact: true });
        const current = await imageField.inputValue();
        expect(current).to.endWith('/gatehouse-test/notes:1');
        await imageField.fill(current.replace(/:1$/, ':2'));
        await checkAccessibility(page);
        await screenshot(page, 'app-7-compose-form');
        await page.getByRole('button', { name: 'Save and deploy the compose file' }).click();
        await page.locator('.run-log[data-state="running"] .run-line').first().waitFor();
        expect(await runEnded()).to.equal('succeeded');
        expect((await container()).Config.Image).to.endWith('/gatehouse-test/notes:2');
        const draft = ((await admin.get(`/api/apps/${APP}`)).body as { app: { draft: { compose: string } } }).app.draft;
        expect(draft.compose).to.contain('/gatehouse-test/notes:2');
        // The page names the image it runs now.
        await page.locator('.app-facts').filter({ hasText: '/gatehouse-test/notes:2' }).waitFor();
    });

    it('changes a secret in the form, masked, and deploys it with the compose file', async () => {
        await page.goto(appUrl('compose'));
        const value = page.getByLabel('Value of GREETING', { exact: true });
        await value.waitFor();
        expect(await value.getAttribute('type')).to.equal('password');
        await value.fill('hello-again');
        await page.getByRole('button', { name: 'Save and deploy the compose file and secrets' }).click();
        expect(await runEnded()).to.equal('succeeded');
        expect((await container()).Config.Env).to.include('GREETING=hello-again');
        const secrets = ((await admin.get(`/api/apps/${APP}`)).body as { app: { draft: { secrets: Record<string, string> } } }).app.draft
            .secrets;
        expect(secrets.GREETING).to.equal('hello-again');
    });

    it('asks before a link leaves the compose tab with changes not saved, and stays when told to', async () => {
        await page.goto(appUrl('compose'));
        const value = page.getByLabel('Value of GREETING', { exact: true });
        await value.waitFor();
        await value.fill('not-saved-yet');
        const asked: string[] = [];
        const answer = (accept: boolean) =>
            page.once('dialog', (dialog) => {
                asked.push(dialog.message());
                void (accept ? dialog.accept() : dialog.dismiss());
            });

        answer(false);
        await page.getByRole('link', { name: 'Status', exact: true }).click();
        expect(asked).to.equal(['Leave this page? The compose file or its secrets have changes that are not saved.']);
        expect(new URL(page.url()).pathname).to.equal(`/apps/${APP}/compose`);
        expect(await value.inputValue()).to.equal('not-saved-yet');

        answer(true);
        await page.getByRole('link', { name: 'Status', exact: true }).click();
        await page.waitForURL(appUrl());
        expect(asked).to.have.length(2);
    });

    it('changes it in the text editor: a lint risk is shown in the list and the gutter, refused, then accepted', async () => {
        // The compose file as the app has it, put back and deployed at the end: the mount of /etc it adds is a risk the
        // other tests' saves do not accept, and they edit it in the form, which the text editor's save makes no longer the
        // tab's first view.
        const { compose: composeBefore, composeEditor } = await draftOf();
        // The image the app runs, notes:1 or, once the model editor's test has changed it, notes:2.
        const image = /image: (\S+)/.exec(composeBefore)?.[1] ?? '';
        expect(image).to.match(/\/gatehouse-test\/notes:[12]$/);
        try {
            await page.goto(appUrl('compose'));
            await page.getByRole('button', { name: 'Text', exact: true }).click();
            const text = page.getByRole('textbox', { name: 'Compose file' });
            await text.waitFor();
            expect(await text.textContent()).to.contain(image);
            await text.locator('.cm-line', { hasText: '- data:/data' }).click();
            await page.keyboard.press('End');
            await page.keyboard.press('Enter');
            await page.keyboard.type('- /etc:/host-etc:ro');
            const risk = page.locator('.finding-risk').filter({ hasText: '/etc' });
            await risk.waitFor();
            expect(await risk.locator('.finding-fix').count()).to.equal(1);
            await page.locator('.cm-lint-marker-error').first().waitFor();
            await checkAccessibility(page);
            await screenshot(page, 'app-8-compose-risk');

            const save = page.getByRole('button', { name: 'Save and deploy the compose file' });
            await save.click();
            const refusal = page.locator('.tab-actions .error-text');
            await refusal.waitFor();
            expect(await refusal.textContent()).to.contain('accept them to deploy anyway');
            expect(await refusal.textContent()).to.not.contain('acceptRisks');

            await page.getByLabel(/^I accept this risk/).check();
            await save.click();
            await page.locator('.run-log[data-state="running"]').waitFor();
            expect(await runEnded()).to.equal('succeeded');
            const mounts = (await container()).Mounts.map((mount) => `${mount.Source}:${mount.Destination}`);
            expect(mounts).to.include('/etc:/host-etc');
            await screenshot(page, 'app-9-compose-text-saved');
        } finally {
            const restored = await admin.put(`/api/apps/${APP}/draft`, {
                compose: composeBefore,
                composeEditor: composeEditor ?? 'model',
            });
            expect(restored.status, restored.text).to.equal(200);
            const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
            expect(deployed.state, deployed.text).to.equal('succeeded');
        }
    });

    it('restarts it', async () => {
        const startedBefore = (await container()).State.StartedAt;
        await page.goto(appUrl());
        // Stop and Restart ask first, saying what visitors get; Cancel does nothing.
        await page.getByRole('button', { name: 'Stop', exact: true }).click();
        const confirmStop = page.getByRole('group', { name: 'Confirm: stop' });
        expect(await confirmStop.textContent()).to.contain('Visitors get an error until it is started again.');
        await confirmStop.getByRole('button', { name: 'Cancel' }).click();
        await confirmStop.waitFor({ state: 'detached' });
        await page.getByRole('button', { name: 'Restart', exact: true }).click();
        await page
            .getByRole('group', { name: 'Confirm: restart' })
            .getByRole('button', { name: `Restart ${APP}` })
            .click();
        expect(await runEnded()).to.equal('succeeded');
        // Its log is in the page below the header, not squeezed into it.
        expect(await page.locator('.app-header .run-log').count()).to.equal(0);
        expect(await page.locator('.app-page > .run-log').count()).to.equal(1);
        expect((await container()).State.Running).to.be.true();
        expect((await container()).State.StartedAt).to.not.equal(startedBefore);
        await page.getByRole('table', { name: 'Containers' }).locator('tr[data-service="web"]').waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'app-10-restarted');
    });

    it("a run's log resumes after a dropped connection, from the last line it had", async () => {
        const EVENTS = /\/api\/runs\/\d+\/events/;
        const asked: Array<Promise<string | null>> = [];
        const onRequest = (request: Request) => {
            if (EVENTS.test(request.url())) {
                const query = new URL(request.url()).searchParams.get('lastEventId');
                asked.push(request.allHeaders().then((headers) => headers['last-event-id'] ?? query));
            }
        };
        page.on('request', onRequest);
        // The first answer of the event stream is cut after two lines, without its end: the connection drops there.
        let cutAfter: string | undefined;
        let total = 0;
        await page.route(EVENTS, async (route) => {
            if (cutAfter !== undefined) {
                await route.continue();
                return;
            }

            const whole = await (await route.fetch()).text();
            const lines = whole.split('\n\n').filter((block) => block.startsWith('id: '));
            total = lines.length;
            cutAfter = /^id: (\d+)/.exec(lines[1] ?? '')?.[1];
            await route.fulfill({ status: 200, contentType: 'text/event-stream', body: `${lines.slice(0, 2).join('\n\n')}\n\n` });
        });
        try {
            await page.goto(appUrl('runs'));
            // The oldest run, the first deploy, has the longest log.
            const run = page.locator('tr[data-run]').last();
            await run.waitFor();
            await run.getByRole('button', { name: /^Show the log of run/ }).click();
            expect(await runEnded()).to.equal('succeeded');
        } finally {
            await page.unroute(EVENTS);
            page.off('request', onRequest);
        }

        expect(total).to.be.above(2);
        const lastEventIds = await Promise.all(asked);
        expect(lastEventIds.length).to.be.at.least(2);
        expect(lastEventIds[0]).to.equal(null);
        expect(lastEventIds[1]).to.equal(cutAfter);
        // Every line once: the two before the drop, then the rest from the server.
        expect(await page.locator('.run-log').last().locator('.run-line').count()).to.equal(total);
    });

    it('a viewer sees no edit control, and the secrets masked', async () => {
        const viewer = await web.signInAs('viewer');
        const editorCalls: string[] = [];
        viewer.page.on('request', (request) => {
            if (/\/api\/(compose|nginx|idp|sso)\//.test(request.url())) {
                editorCalls.push(request.url());
            }
        });
        await viewer.page.goto(appUrl());
        await viewer.page.getByRole('table', { name: 'Containers' }).locator('tr[data-service="web"]').waitFor();
        expect(await viewer.page.getByRole('button', { name: /^(Restart|Stop|Start)$/ }).count()).to.equal(0);
        expect(await viewer.page.getByRole('link', { name: 'Delete', exact: true }).count()).to.equal(0);
        await checkAccessibility(viewer.page);
        await screenshot(viewer.page, 'app-11-viewer-status');

        await viewer.page.getByRole('link', { name: 'Compose', exact: true }).click();
        const text = viewer.page.getByRole('textbox', { name: 'Compose file' });
        await text.waitFor();
        expect(await text.getAttribute('aria-readonly')).to.equal('true');
        expect(await text.getAttribute('contenteditable')).to.equal('false');
        expect(
            await viewer.page.getByRole('button', { name: /^(Form|Text|Save and deploy the compose file and secrets)$/ }).count(),
        ).to.equal(0);
        // A viewer sees which secrets there are, never their values (hello-notebook, or hello-again once the secret's test has run).
        const secret = (await draftOf()).secrets.GREETING ?? '';
        expect(secret).to.match(/^hello-/);
        await viewer.page.getByRole('region', { name: 'Variables and secrets' }).getByText('GREETING').waitFor();
        expect(await viewer.page.content()).to.not.contain(secret);
        await checkAccessibility(viewer.page);

        await viewer.page.getByRole('link', { name: 'Files', exact: true }).click();
        const secrets = viewer.page.locator('.file-view[data-kind="secrets"]');
        await secrets.waitFor();
        expect(await secrets.locator('pre').textContent()).to.equal('GREETING=••••••••\n');
        expect(await viewer.page.content()).to.not.contain(secret);

        await viewer.page.getByRole('link', { name: 'Sign-in', exact: true }).click();
        await viewer.page.getByText('No method chosen').waitFor();
        expect(await viewer.page.getByRole('button', { name: 'Change the method' }).count()).to.equal(0);
        await viewer.page.getByRole('link', { name: 'Access', exact: true }).click();
        await viewer.page.getByText('Public: no identity provider stands in front of it.').waitFor();
        expect(await viewer.page.getByRole('button', { name: 'Save the groups' }).count()).to.equal(0);
        await viewer.page.goto(appUrl('delete'));
        await viewer.page.getByText('Only administrators delete apps.').waitFor();
        expect(editorCalls).to.equal([]);
    });

    it('deletes it with options, each explained, and what it removes previewed', async () => {
        // An app of its own, deployed and restarted (runs to forget), the same as the one the other tests look at.
        await deployApp(DOOMED);
        const restarted = await runToEnd(admin, await admin.post(`/api/apps/${DOOMED}/action`, { action: 'restart' }));
        expect(restarted.state, restarted.text).to.equal('succeeded');
        await page.goto(`${web.baseUrl}/apps/${DOOMED}/delete`);
        await panel('Delete');
        const preview = page.getByRole('region', { name: 'What this delete removes' });
        await preview.getByText(`container ${DOOMED}-web-1`).waitFor();
        expect(await preview.textContent()).to.not.contain('volume');
        for (const option of ["Delete the app's folder", 'Remove the volumes', 'Forget the history']) {
            const box = page.getByRole('checkbox', { name: option });
            expect(await box.getAttribute('aria-describedby')).to.match(/-explain$/);
            await box.check();
        }

        const appDir = Path.join(web.context.config.apps.appsDir, DOOMED);
        await preview.getByText(`volume ${DOOMED}_data`).waitFor();
        await preview.getByText(appDir, { exact: true }).waitFor();
        expect(await preview.textContent()).to.match(/\d+ runs/);
        const remove = page.getByRole('button', { name: `Delete ${DOOMED}` });
        expect(await remove.isDisabled()).to.be.true();
        await page.getByLabel(`Type the app's name (${DOOMED}) to confirm`).fill(DOOMED);
        await checkAccessibility(page);
        await screenshot(page, 'app-12-delete');
        await remove.click();
        expect(await runEnded()).to.equal('succeeded');
        await page.getByText(`${DOOMED} is deleted.`).waitFor();
        await screenshot(page, 'app-13-deleted');
        // The header no longer says running nor offers to restart or stop what is gone.
        expect(await page.locator('.app-page').getAttribute('data-state')).to.equal('deleted');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).to.contain('deleted');
        expect(await page.getByRole('region', { name: 'Actions' }).count()).to.equal(0);

        expect((await admin.get(`/api/apps/${DOOMED}`)).status).to.equal(404);
        expect(Fs.existsSync(appDir)).to.be.false();
        expect(await engine.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${DOOMED}`] } })).to.equal([]);
        expect((await engine.listVolumes()).Volumes?.some((volume) => volume.Name === `${DOOMED}_data`) ?? false).to.be.false();
        expect(problems.list()).to.equal([]);
    });
});
