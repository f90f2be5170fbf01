/**
 * The web UI's benchmark. (1) The JavaScript a first visit downloads before anything shows (the entry script and
 * the modules it preloads, from web/dist/index.html), gzipped, against the 150 KB budget. (2) The dashboard's first
 * render in Chromium (Debian's, through playwright-core) against a Gatehouse holding 50 apps and 1,000 runs: from
 * the navigation's start to the chart of apps by state and the recent runs drawn, against the same page, as the
 * UI rendered it, served as static HTML (with the same stylesheet) by a bare node:http server.
 */
import Fs from 'node:fs';
import Http from 'node:http';
import Path from 'node:path';
import Zlib from 'node:zlib';

import knexFactory from 'knex';
import type { Page } from 'playwright-core';

import { knexConfig } from '../lib/database.ts';
import { freePort } from '../test/helpers/server.ts';
import { launchChromium } from '../test/support/chromium.ts';
import { ensureWebBuild } from '../test/web/harness.ts';
import { signIn } from './app-runs.ts';
import { type BenchFigure, median, ROOT_DIR, startGatehouse } from './harness.ts';

const DIST_DIR = Path.join(ROOT_DIR, 'web', 'dist');
const BUDGET_KB = 150;
const APPS = 50;
const RUNS = 1_000;
const ROUNDS = Number(process.env.BENCH_WEB_ROUNDS ?? 9);
const TARGET_RENDER_MS = 1_000;
const APP_STATES = ['running', 'running', 'running', 'stopped', 'failed', 'draft'];
const RUN_STATES = ['succeeded', 'succeeded', 'succeeded', 'failed', 'rolled back', 'interrupted'];

const ms = (value: number) => `${value.toFixed(1)} ms`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** The scripts index.html loads at once: its module entry and the modules it preloads. Lazy pages are left out. */
function initialScripts(indexHtml: string): string[] {
    const sources = [
        ...indexHtml.matchAll(/<script[^>]*\ssrc="([^"]+)"/g),
        ...indexHtml.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g),
    ];
    return [...new Set(sources.map((match) => match[1] ?? ''))].filter((source) => source.startsWith('/assets/'));
}

function gzippedSize(file: string): number {
    return Zlib.gzipSync(Fs.readFileSync(file), { level: 9 }).length;
}

function benchInitialScript(): BenchFigure {
    const scripts = initialScripts(Fs.readFileSync(Path.join(DIST_DIR, 'index.html'), 'utf8'));
    const sizes = scripts.map((source) => ({
        source,
        raw: Fs.statSync(Path.join(DIST_DIR, source)).size,
        gzipped: gzippedSize(Path.join(DIST_DIR, source)),
    }));
    const total = sizes.reduce((sum, size) => sum + size.gzipped, 0);
    const lazy = Fs.readdirSync(Path.join(DIST_DIR, 'assets'))
        .filter((file) => file.endsWith('.js') && !scripts.includes(`/assets/${file}`))
        .reduce((sum, file) => sum + gzippedSize(Path.join(DIST_DIR, 'assets', file)), 0);
    return {
        name: 'web UI: initial JavaScript, gzipped',
        measured: kb(total),
        baseline: `${BUDGET_KB} KB budget`,
        ratio: total / 1024 / BUDGET_KB,
        target: `<= 1 (at most ${BUDGET_KB} KB)`,
        met: total / 1024 <= BUDGET_KB,
        notes:
            `${sizes.map((size) => `${size.source} ${kb(size.raw)} raw, ${kb(size.gzipped)} gzipped`).join('; ')} (gzip level 9). ` +
            `The pages loaded when first shown (new app, app, account, admin, with CodeMirror) add ${kb(lazy)} gzipped, not counted.`,
    };
}

/** 50 apps in every state and 1,000 runs, written straight into Gatehouse's database as a used server holds them. */
async function seed(dataDir: string): Promise<void> {
    const knex = knexFactory(knexConfig(`sqlite:${Path.join(dataDir, 'gatehouse.sqlite')}`));
    try {
        const now = Date.now();
        const apps = Array.from({ length: APPS }, (_, index) => {
            const name = `app-${String(index + 1).padStart(2, '0')}`;
            return {
                name,
                title: `App ${index + 1}`,
                domain: `${name}.apps.test`,
                state: APP_STATES[index % APP_STATES.length],
                host_port: 40_000 + index,
                draft: '{}',
                created_at: now,
                updated_at: now,
            };
        });
        await knex('dp_apps').insert(apps);
        const runs = Array.from({ length: RUNS }, (_, index) => {
            const startedAt = now - (RUNS - index) * 60_000;
            return {
                app_name: apps[index % APPS]?.name,
                kind: index % 4 === 0 ? 'restart' : 'deploy',
                state: RUN_STATES[index % RUN_STATES.length],
                started_at: startedAt,
                ended_at: startedAt + 30_000,
            };
        });
        for (let start = 0; start < runs.length; start += 100) {
            await knex('dp_runs').insert(runs.slice(start, start + 100));
        }
    } finally {
        await knex.destroy();
    }
}

/** Milliseconds from the navigation's start to the frame in which the chart and the ten recent runs are drawn. */
async function firstRender(page: Page, url: string): Promise<number> {
    await page.goto(url, { waitUntil: 'commit' });
    const drawn = await page.waitForFunction(
        () =>
            document.querySelector('.state-chart svg') && document.querySelectorAll('.run-item').length >= 10 ? performance.now() : false,
        undefined,
        { polling: 'raf', timeout: 30_000 },
    );
    return (await drawn.jsonValue()) as number;
}

/** The page as the UI drew it, scripts taken out, with its stylesheet: what a server-rendered page would send. */
async function renderedPage(page: Page, url: string): Promise<string> {
    await firstRender(page, url);
    await page.waitForSelector('.health-tile', { timeout: 60_000 });
    const html = await page.evaluate(() => `<!doctype html>\n${document.documentElement.outerHTML}`);
    return html.replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, '').replace(/<link[^>]*rel="modulepreload"[^>]*>/g, '');
}

async function startStaticServer(html: string): Promise<{ url: string; close(): Promise<void> }> {
    const port = await freePort();
    const server = Http.createServer((request, response) => {
        const path = (request.url ?? '/').split('?')[0] ?? '/';
        if (path.startsWith('/assets/') && /^\/assets\/[\w.-]+$/.test(path)) {
            const file = Path.join(DIST_DIR, path);
            if (Fs.existsSync(file)) {
                const type = path.endsWith('.css') ? 'text/css' : 'text/javascript';
                response.writeHead(200, { 'content-type': type, 'cache-control': 'public, max-age=31536000, immutable' });
                response.end(Fs.readFileSync(file));
                return;
            }
        }

        if (path === '/') {
            response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
            response.end(html);
            return;
        }

        response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function benchDashboardRender(): Promise<BenchFigure> {
    const cleanups: Array<() => Promise<void>> = [];
    try {
        const gatehouse = await startGatehouse();
        cleanups.push(() => gatehouse.stop());
        const baseUrl = `http://127.0.0.1:${gatehouse.port}`;
        const admin = await signIn(baseUrl, gatehouse.dataDir);
        await seed(gatehouse.dataDir);

        const chromium = await launchChromium();
        cleanups.push(() => chromium.close());
        const { context } = chromium;
        const page = context.pages()[0] ?? (await context.newPage());
        await context.addCookies([...admin.cookies].map(([name, value]) => ({ name, value, url: baseUrl })));

        const html = await renderedPage(page, `${baseUrl}/`);
        const statics = await startStaticServer(html);
        cleanups.push(() => statics.close());
        await firstRender(page, statics.url);

        const ui: number[] = [];
        const plain: number[] = [];
        for (let round = 0; round < ROUNDS; round += 1) {
            const sides = [
                async () => ui.push(await firstRender(page, `${baseUrl}/`)),
                async () => plain.push(await firstRender(page, statics.url)),
            ];
            for (const side of round % 2 === 0 ? sides : sides.reverse()) {
                await side();
            }
        }

        const cdp = await context.newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
        const cold: number[] = [];
        for (let round = 0; round < 3; round += 1) {
            cold.push(await firstRender(page, `${baseUrl}/`));
        }

        const ratio = median(ui) / median(plain);
        return {
            name: `web UI: dashboard first render (${APPS} apps, ${RUNS.toLocaleString('en')} runs)`,
            measured: `median ${ms(median(ui))} (${ui.map(ms).join(', ')})`,
            baseline: `the same page as static HTML from node:http: median ${ms(median(plain))} (${plain.map(ms).join(', ')})`,
            ratio,
            target: `first render <= ${TARGET_RENDER_MS} ms (ratio recorded)`,
            met: median(ui) <= TARGET_RENDER_MS,
            notes:
                `From the navigation's start (performance.now() in the page) to the frame with the chart of apps by state and the ten recent runs ` +
                `drawn; the UI fetches /api/auth/me, /api/dashboard and /api/system (the integration tiles come later and are not waited for). ` +
                `${ROUNDS} rounds each, alternating which goes first, with the browser's cache as a returning visitor has it (assets are immutable); ` +
                `with the cache off the UI took median ${ms(median(cold))} (${cold.map(ms).join(', ')}). Gatehouse in its own process on SQLite, ` +
                `Debian's chromium headless, on 127.0.0.1.`,
        };
    } finally {
        for (const cleanup of cleanups.reverse()) {
            await cleanup();
        }
    }
}

export async function benchWeb(): Promise<BenchFigure[]> {
    await ensureWebBuild();
    return [benchInitialScript(), await benchDashboardRender()];
}
