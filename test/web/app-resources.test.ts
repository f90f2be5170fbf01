// needs: docker, chromium
import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { waitUntil } from '../helpers/wait.ts';
import { buildTestImage, removeProjects, startAppContainer } from '../support/images.ts';
import {
    checkAccessibility,
    checkNoSidewaysScroll,
    openAdminPage,
    type PageProblems,
    screenshot,
    startWebServer,
    type WebServer,
} from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Crypto.randomBytes(4).toString('hex');
const APP = `gauges-${SUFFIX}`;
const IMAGE = `gatehouse-test/gauges:${SUFFIX}`;

describe('web UI: the app page’s resources and the dashboard’s top apps', { timeout: 240_000 }, () => {
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    before({ timeout: 180_000 }, async () => {
        web = await startWebServer({ STATS_INTERVAL_SECONDS: '1', STATS_SAMPLES: '120' });
        const created = await (web.admin as Browser).post('/api/apps', { name: APP, image: 'gatehouse-test/gauges', tag: SUFFIX });
        expect(created.status, created.text).to.equal(201);
        // As deployed: its containers are made here, as Compose labels them.
        await web.context.database.knex('dp_apps').where({ name: APP }).update({ state: 'running' });
        buildTestImage(IMAGE);
        await startAppContainer(APP, 'web', IMAGE, 'while :; do :; done', { NanoCpus: 200_000_000 });
        await startAppContainer(APP, 'cache', IMAGE, 'exec sleep 3600');

        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await removeProjects([APP], [IMAGE]);
        await web?.stop();
    });

    it('draws CPU and memory per container on the Resources tab, with the figures in words beside them', async () => {
        await page.goto(`${web.baseUrl}/apps/${APP}/resources`);
        await page.getByRole('heading', { level: 2, name: 'Resources' }).waitFor();
        const web1 = page.locator(`article[data-container="${APP}-web-1"]`);
        // Two samples at least make a line (the second point is an "L" in the path).
        await web1.locator('.resource-chart-cpu path').waitFor({ state: 'attached', timeout: 30_000 });
        await waitUntil(
            'a line of several samples',
            async () => ((await web1.locator('.resource-chart-cpu path').getAttribute('d')) ?? '').includes('L'),
            { timeoutMs: 30_000, intervalMs: 200 },
        );
        expect(await web1.getByRole('heading', { level: 3 }).textContent()).to.contain('web');
        const cpu = await waitUntil(
            'the busy container’s CPU figure above zero',
            async () => {
                const text = (await web1.locator('[data-figure="cpu"]').textContent()) ?? '';
                return Number(/^([\d.]+) %/.exec(text)?.[1] ?? 0) > 2 && text;
            },
            { timeoutMs: 30_000, intervalMs: 200 },
        );
        expect(cpu).to.match(/^[\d.]+ % \(peak [\d.]+ %\)$/);
        expect(await web1.locator('[data-figure="memory"]').textContent()).to.match(/^[\d.]+ (B|KB|MB) of [\d.]+ (MB|GB|TB)$/);
        expect(await web1.locator('[data-figure="network"]').textContent()).to.match(/^[\d.]+ [KMG]?B in, [\d.]+ [KMG]?B out$/);
        expect(await web1.locator('[data-figure="block"]').textContent()).to.match(/^[\d.]+ [KMG]?B read, [\d.]+ [KMG]?B written$/);
        const cpuChart = web1.getByRole('img', { name: /^CPU of web over the last 2 minutes: now [\d.]+ %, peak [\d.]+ %$/ });
        expect(await cpuChart.count()).to.equal(1);
        expect(await web1.getByRole('img', { name: /^Memory of web over the last 2 minutes: now / }).count()).to.equal(1);
        // Both containers, in service order.
        await page
            .locator(`article[data-container="${APP}-cache-1"] .resource-chart-memory path`)
            .waitFor({ state: 'attached', timeout: 30_000 });
        expect(
            await page
                .locator('article.resource-container')
                .evaluateAll((articles) => articles.map((article) => article.getAttribute('data-container'))),
        ).to.equal([`${APP}-cache-1`, `${APP}-web-1`]);
        await checkAccessibility(page);
        await screenshot(page, 'app-resources');
        await checkNoSidewaysScroll(page);
        await page.setViewportSize({ width: 1280, height: 900 });
        expect(problems.list()).to.equal([]);
    });

    it('opens the resources stream again when its connection is lost', async () => {
        const before = problems.list().length;
        let refused = 0;
        await page.route('**/stats/stream', async (route) => {
            if (refused < 2) {
                refused += 1;
                await route.abort('connectionreset');
            } else {
                await route.continue();
            }
        });
        try {
            await page.goto(`${web.baseUrl}/apps/${APP}/resources`);
            await page
                .locator(`article[data-container="${APP}-web-1"] .resource-chart-cpu path`)
                .waitFor({ state: 'attached', timeout: 30_000 });
            expect(refused).to.equal(2);
            expect(await page.getByText('Stopped:').count()).to.equal(0);
        } finally {
            await page.unroute('**/stats/stream');
        }
        const lost = problems.list().slice(before);
        expect(lost.every((problem) => problem.includes('ERR_CONNECTION_RESET'))).to.be.true();
    });

    it('ranks the app among the top apps on the dashboard, linked to its resources', async () => {
        await page.goto(`${web.baseUrl}/`);
        const card = page.getByRole('region', { name: 'Top apps now' });
        const byCpu = card.getByRole('list', { name: 'By CPU' });
        await byCpu.locator(`li[data-app="${APP}"]`).waitFor({ timeout: 30_000 });
        expect(await byCpu.locator(`li[data-app="${APP}"]`).textContent()).to.match(/[\d.]+ %/);
        expect(await card.getByRole('list', { name: 'By memory' }).locator(`li[data-app="${APP}"]`).textContent()).to.match(
            /[\d.]+ (B|KB|MB)/,
        );
        await checkAccessibility(page);
        await byCpu.getByRole('link', { name: APP }).click();
        await page.waitForURL(`${web.baseUrl}/apps/${APP}/resources`);
        await page.getByRole('heading', { level: 2, name: 'Resources' }).waitFor();
        expect(problems.list().filter((problem) => !problem.includes('ERR_CONNECTION_RESET'))).to.equal([]);
    });
});
