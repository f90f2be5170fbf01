// needs: docker, chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { waitUntil } from '../helpers/wait.ts';
import { buildWebImage, removeProjects } from '../support/images.ts';
import { type RunningServices, startServices } from '../support/services.ts';
import { runToEnd } from '../support/sse.ts';
import {
    checkAccessibility,
    openAdminPage,
    type PageProblems,
    screenshot,
    startDeployingWebServer,
    startWebServer,
    type WebServer,
} from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const APP = `console-${SUFFIX}`;
const IDLE_SECONDS = 6;

/** The app's compose file: its web service, and a worker beside it (two services: the tab offers a choice). */
function twoServices(image: string, port: number): string {
    return [
        'services:',
        '  web:',
        `    image: ${image}`,
        '    restart: unless-stopped',
        '    ports:',
        `      - "127.0.0.1:${port}:80"`,
        '  worker:',
        `    image: ${image}`,
        '    restart: unless-stopped',
        '    command: ["sleep", "86400"]',
    ].join('\n');
}

/** The lines xterm.js shows, as text. */
async function screenLines(page: Page): Promise<string[]> {
    const rows = await page.locator('.terminal-screen .xterm-rows > div').allInnerTexts();
    return rows.map((row) => row.replace(/\u00a0/g, ' ').trimEnd());
}

async function waitForLine(page: Page, what: string, matches: (line: string) => boolean): Promise<string> {
    try {
        return await waitUntil(what, async () => (await screenLines(page)).find(matches));
    } catch (error) {
        throw new Error(`${(error as Error).message}; the screen shows ${JSON.stringify((await screenLines(page)).filter(Boolean))}`);
    }
}

describe('web UI: the app page’s terminal', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let web: WebServer;
    let admin: Browser;
    let page: Page;
    let problems: PageProblems;
    let image: string;

    const terminalUrl = () => `${web.baseUrl}/apps/${APP}/terminal`;
    const status = () => page.locator('.terminal [role="status"]');

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/console-web:${SUFFIX}`, '<h1>console</h1>\n', true);
        web = await startDeployingWebServer(services, { TERMINAL_ENABLED: '1', TERMINAL_IDLE_SECONDS: String(IDLE_SECONDS) });
        admin = web.admin as Browser;
        const created = await admin.post('/api/apps', { name: APP, image: image.slice(0, image.lastIndexOf(':')), tag: SUFFIX });
        expect(created.status, created.text).to.equal(201);
        const compose = twoServices(image, (created.body as { app: { hostPort: number } }).app.hostPort);
        const saved = await admin.put(`/api/apps/${APP}/draft`, { compose, auth: { access: 'public' } });
        expect(saved.status, saved.text).to.equal(200);
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await removeProjects([APP], [image]);
        await web?.stop();
        services?.stop();
    });

    it('opens a shell in the chosen service from the Terminal tab, runs what is typed and shows what it writes', async () => {
        await page.goto(terminalUrl());
        await page.getByRole('heading', { level: 2, name: 'Terminal' }).waitFor();
        const service = page.getByLabel('Service');
        // The services come with the app's status, after the tab shows: wait for them before reading the list.
        await service.locator('option', { hasText: 'worker' }).waitFor({ state: 'attached' });
        expect(await service.locator('option').allInnerTexts()).to.equal(['web', 'worker']);
        await service.selectOption('worker');
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await status()
            .filter({ hasText: `Connected to ${APP}-worker-1.` })
            .waitFor();
        await waitForLine(page, 'the prompt shows', (line) => /[#$]\s*$/.test(line));

        await page.keyboard.type('echo "$((6*7))"');
        await page.keyboard.press('Enter');
        await waitForLine(page, '42 shows', (line) => line === '42');
        // The shell's size is the screen's, as xterm.js fits it to the panel.
        await page.keyboard.type('stty size');
        await page.keyboard.press('Enter');
        const size = await waitForLine(page, 'stty says its size', (line) => /^\d+ \d+$/.test(line));
        const [rows = 0, cols = 0] = size.split(' ').map(Number);
        expect(rows).to.be.within(10, 60);
        expect(cols).to.be.within(60, 200);
        // The worker's container, not the web one: it runs the worker's command (its arguments apart by NULs, which
        // the screen does not show).
        await page.keyboard.type('cat /proc/1/cmdline; echo');
        await page.keyboard.press('Enter');
        await waitForLine(page, "the worker's command shows", (line) => line === 'sleep86400');
        // A 24-bit colour, which xterm.js sets as a style attribute (through the CSSOM here: the page's CSP refuses
        // style attributes).
        await page.keyboard.type("printf '\\033[38;2;250;120;0mtruecolour\\033[0m\\n'");
        await page.keyboard.press('Enter');
        await waitForLine(page, 'the coloured word shows', (line) => line === 'truecolour');
        const coloured = page.locator('.xterm-rows span', { hasText: /^truecolour$/ });
        expect(await coloured.evaluate((element) => getComputedStyle(element).color)).to.equal('rgb(250, 120, 0)');
        await screenshot(page, 'app-terminal-1-connected');
        // A long paste (80 KB, more than the server takes in one frame) reaches the shell whole.
        const lines = Array.from({ length: 80 }, (_, index) => `${String(index).padStart(4, '0')}${'x'.repeat(995)}`);
        await page.keyboard.type('cat > /pasted.txt');
        await page.keyboard.press('Enter');
        await page.locator('.xterm-helper-textarea').evaluate(
            (textarea, text) => {
                const clipboardData = new DataTransfer();
                clipboardData.setData('text/plain', text);
                textarea.dispatchEvent(new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true }));
            },
            `${lines.join('\n')}\n`,
        );
        await page.keyboard.press('Control+D');
        await page.keyboard.type('wc -c < /pasted.txt');
        await page.keyboard.press('Enter');
        await waitForLine(page, 'the pasted bytes are counted', (line) => line.trim() === '80000');
        await checkAccessibility(page, { exclude: ['.xterm-helper-textarea'] });

        await page.getByRole('button', { name: 'Disconnect' }).click();
        await status().filter({ hasText: 'You disconnected.' }).waitFor();
        await page.getByRole('button', { name: 'Connect again' }).waitFor();
        const audited = await waitUntil('the session is audited', async () => {
            const entries = (
                (await admin.get('/api/admin/audit?action=terminal.session')).body as {
                    entries: Array<{ details: Record<string, unknown> }>;
                }
            ).entries;
            return entries[0];
        });
        expect(audited.details).to.include({ service: 'worker', container: `${APP}-worker-1`, ended: 'closed' });
        expect(problems.list()).to.equal([]);
    });

    it('says why the server closed an idle session, and connects again', async () => {
        await page.goto(terminalUrl());
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await status()
            .filter({ hasText: `Connected to ${APP}-web-1.` })
            .waitFor();
        await status()
            .filter({ hasText: `The session was closed after ${IDLE_SECONDS} seconds without input or output. Connect again to go on.` })
            .waitFor({ timeout: (IDLE_SECONDS + 15) * 1000 });
        expect(await page.locator('.terminal-screen').getAttribute('data-state')).to.equal('closed');
        await screenshot(page, 'app-terminal-2-idle');
        await checkAccessibility(page, { exclude: ['.xterm-helper-textarea'] });

        await page.getByRole('button', { name: 'Connect again' }).click();
        await status()
            .filter({ hasText: `Connected to ${APP}-web-1.` })
            .waitFor();
        await page.keyboard.type('echo "again-$((2*4))"');
        await page.keyboard.press('Enter');
        await waitForLine(page, 'again-8 shows', (line) => line === 'again-8');
        await page.getByRole('button', { name: 'Disconnect' }).click();
        await status().filter({ hasText: 'You disconnected.' }).waitFor();
        expect(problems.list()).to.equal([]);
    });

    it('shows no Terminal tab to an editor', async () => {
        const editor = await web.signInAs('editor');
        await editor.page.goto(`${web.baseUrl}/apps/${APP}`);
        await editor.page.getByRole('link', { name: 'Logs', exact: true }).waitFor();
        expect(await editor.page.getByRole('link', { name: 'Terminal', exact: true }).count()).to.equal(0);
        await editor.page.goto(terminalUrl());
        await editor.page.getByText('Only administrators open a terminal.').waitFor();
    });

    it('says how to turn the terminal on when the server has it off', async () => {
        const off = await startWebServer();
        try {
            expect((await (off.admin as Browser).post('/api/apps', { name: 'plain', image: 'busybox', tag: 'latest' })).status).to.equal(
                201,
            );
            const opened = await openAdminPage(off);
            await opened.page.goto(`${off.baseUrl}/apps/plain/terminal`);
            await opened.page.getByText('The terminal is off: set TERMINAL_ENABLED=true').waitFor();
            expect(await opened.page.getByRole('button', { name: 'Connect' }).count()).to.equal(0);
            expect(opened.problems.list()).to.equal([]);
        } finally {
            await off.stop();
        }
    });
});
