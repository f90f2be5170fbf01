/**
 * The web UI's browser tests: a real Gatehouse on 127.0.0.1 (fresh database and data folder), the UI built
 * once (web/dist, rebuilt when web/ changed since, under a lock so parallel test files build it only once), and
 * Debian's chromium through playwright-core. Also the accessibility check (axe-core) and screenshots.
 */
import { spawnSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Os from 'node:os';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';
import type { BrowserContext, Locator, Page } from 'playwright-core';

import { ROOT_DIR, WEB_DIST_DIR } from '../../server.ts';
import { Browser, signIn } from '../helpers/browser.ts';
import { appHostPorts, createTestServer, freePort, type TestServer } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { launchChromium, type RunningChromium } from '../support/chromium.ts';
import type { RunningServices } from '../support/services.ts';

export type Role = 'viewer' | 'editor' | 'admin';

export const ADMIN_ACCOUNT = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };
export const USER_PASSWORD = 'user-password-1';
export const SCREENSHOTS_DIR = Path.join(ROOT_DIR, 'test-output', 'screenshots');

const WEB_DIR = Path.join(ROOT_DIR, 'web');
const BUILD_SOURCES = [Path.join(WEB_DIR, 'src'), Path.join(WEB_DIR, 'index.html'), Path.join(WEB_DIR, 'vite.config.ts')];
/** Written by web/build.ts: when the build started, so that files changed while it ran count as newer. */
const BUILD_STAMP = Path.join(WEB_DIST_DIR, '.build-started');
const BUILD_LOCK = Path.join(
    Os.tmpdir(),
    `gatehouse-web-build-${Crypto.createHash('sha1').update(ROOT_DIR).digest('hex').slice(0, 12)}.lock`,
);
const BUILD_TIMEOUT_MS = 180_000;

function newestModification(path: string): number {
    const stat = Fs.statSync(path, { throwIfNoEntry: false });
    if (!stat) {
        return 0;
    }

    if (!stat.isDirectory()) {
        return stat.mtimeMs;
    }

    let newest = stat.mtimeMs;
    for (const entry of Fs.readdirSync(path)) {
        newest = Math.max(newest, newestModification(Path.join(path, entry)));
    }

    return newest;
}

function builtAt(): number {
    const stamp = Fs.existsSync(BUILD_STAMP) ? Number(Fs.readFileSync(BUILD_STAMP, 'utf8').trim()) : NaN;
    if (Number.isFinite(stamp)) {
        return stamp;
    }

    return Fs.statSync(Path.join(WEB_DIST_DIR, 'index.html'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

export function webBuildIsFresh(): boolean {
    if (!Fs.existsSync(Path.join(WEB_DIST_DIR, 'index.html'))) {
        return false;
    }

    return Math.max(...BUILD_SOURCES.map(newestModification)) <= builtAt();
}

function processIsAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}

/** The lock is a folder (made atomically) holding the builder's pid; a dead builder's lock is taken over. */
function tryLock(): boolean {
    try {
        Fs.mkdirSync(BUILD_LOCK);
        Fs.writeFileSync(Path.join(BUILD_LOCK, 'pid'), String(process.pid));
        return true;
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
            throw error;
        }

        const owner = Number(Fs.readFileSync(Path.join(BUILD_LOCK, 'pid'), { encoding: 'utf8', flag: 'a+' }));
        const age = Date.now() - (Fs.statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? 0);
        if ((owner > 0 && !processIsAlive(owner)) || (owner === 0 && age > 10_000)) {
            Fs.rmSync(BUILD_LOCK, { recursive: true, force: true });
        }

        return false;
    }
}

function build(): void {
    const result = spawnSync(process.execPath, ['--import', 'tsx', Path.join(WEB_DIR, 'build.ts')], { cwd: ROOT_DIR, encoding: 'utf8' });
    if (result.status !== 0) {
        throw new Error(`npm run build:web failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
    }
}

let building: Promise<void> | undefined;

/** Builds web/dist when it is missing or older than web/src; one build at a time across processes. */
export async function ensureWebBuild(): Promise<void> {
    building ??= (async () => {
        await waitUntil(
            'the web UI is built',
            () => {
                if (webBuildIsFresh()) {
                    return true;
                }

                if (!tryLock()) {
                    return false;
                }

                try {
                    if (!webBuildIsFresh()) {
                        build();
                    }
                } finally {
                    Fs.rmSync(BUILD_LOCK, { recursive: true, force: true });
                }

                return true;
            },
            { timeoutMs: BUILD_TIMEOUT_MS, intervalMs: 200 },
        );
    })().finally(() => {
        building = undefined;
    });
    return await building;
}

export interface SignedInUser {
    email: string;
    name: string;
    password: string;
    role: Role;
    /** The same user through the API (its own session), for setting things up. */
    api: Browser;
    /** A page of a browser of its own, signed in. */
    page: Page;
    context: BrowserContext;
}

export interface WebServer {
    baseUrl: string;
    dataDir: string;
    server: Server;
    context: TestServer;
    /** The first administrator through the API; undefined when started with `setup: false`. */
    admin: Browser | undefined;
    /** A new user of the role (made by the administrator), with its own browser signed in. */
    signInAs(role: Role): Promise<SignedInUser>;
    /** A new user of the role through the API only, with its password. */
    createUser(role: Role): Promise<{ email: string; name: string; password: string; api: Browser }>;
    /** A browser of its own (a fresh profile: no cookies), with one page. */
    openBrowser(): Promise<{ context: BrowserContext; page: Page }>;
    /** Signs a browser in through the API (as the sign-in page does); the page then loads signed in. */
    signInBrowser(context: BrowserContext, email: string, password: string): Promise<void>;
    stop(): Promise<void>;
}

let userCounter = 0;

/**
 * A started Gatehouse serving the built UI, with its first administrator set up (unless `setup: false`: then
 * the setup token waits in dataDir/setup-token). PUBLIC_URL is the server's own address, so the browser's
 * Origin is accepted.
 */
export async function startWebServer(environment: Record<string, string> = {}, options: { setup?: boolean } = {}): Promise<WebServer> {
    await ensureWebBuild();
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const context = await createTestServer({ PORT: String(port), PUBLIC_URL: `${baseUrl}/`, ...environment });
    await context.server.start();
    const browsers: RunningChromium[] = [];

    let admin: Browser | undefined;
    if (options.setup !== false) {
        admin = new Browser(baseUrl);
        await admin.get('/api/setup/status');
        const token = Fs.readFileSync(Path.join(context.dataDir, 'setup-token'), 'utf8').trim();
        const created = await admin.post('/api/setup', { token, ...ADMIN_ACCOUNT });
        if (created.status !== 201) {
            throw new Error(`setup failed: ${created.status} ${created.text}`);
        }

        await admin.post('/api/auth/login', { email: ADMIN_ACCOUNT.email, password: ADMIN_ACCOUNT.password });
    }

    const openBrowser = async () => {
        const chromium = await launchChromium();
        browsers.push(chromium);
        const page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
        return { context: chromium.context, page };
    };

    const signInBrowser = async (browserContext: BrowserContext, email: string, password: string) => {
        await browserContext.request.get(`${baseUrl}/api/setup/status`);
        const csrf = (await browserContext.cookies(baseUrl)).find((cookie) => cookie.name === 'dp_csrf')?.value ?? '';
        const answer = await browserContext.request.post(`${baseUrl}/api/auth/login`, {
            data: { email, password },
            headers: { 'X-CSRF-Token': csrf },
        });
        if (!answer.ok()) {
            throw new Error(`could not sign ${email} in: ${answer.status()} ${await answer.text()}`);
        }
    };

    const createUser = async (role: Role) => {
        if (!admin) {
            throw new Error('no administrator: the server was started with setup: false');
        }

        userCounter += 1;
        const email = `${role}${userCounter}@example.com`;
        const name = `${role[0]?.toUpperCase()}${role.slice(1)} ${userCounter}`;
        const created = await admin.post('/api/admin/users', { email, name, password: USER_PASSWORD, role });
        if (created.status !== 201) {
            throw new Error(`could not create a ${role}: ${created.status} ${created.text}`);
        }

        return { email, name, password: USER_PASSWORD, api: await signIn(baseUrl, email, USER_PASSWORD) };
    };

    const signInAs = async (role: Role): Promise<SignedInUser> => {
        const user = await createUser(role);
        const { context: browserContext, page } = await openBrowser();
        await signInBrowser(browserContext, user.email, user.password);
        return { ...user, role, page, context: browserContext };
    };

    return {
        baseUrl,
        dataDir: context.dataDir,
        server: context.server,
        context,
        admin,
        signInAs,
        createUser,
        openBrowser,
        signInBrowser,
        async stop() {
            await Promise.allSettled(browsers.map((browser) => browser.close()));
            await context.cleanup();
        },
    };
}

/** A browser of its own signed in as the first administrator, its page watched for problems. */
/**
 * A web server that deploys for real on the test's services (Docker, nginx, the registry), without an ACME directory
 * (the site keeps its stand-in certificate), its apps under apps.test.
 */
export async function startDeployingWebServer(services: RunningServices, environment: Record<string, string> = {}): Promise<WebServer> {
    const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
    return await startWebServer({
        ...withoutAcme,
        BASE_DOMAIN: 'apps.test',
        APPS_FIRST_HOST_PORT: String(await appHostPorts()),
        ...environment,
    });
}

/** Waits for the last run log on the page to end; answers how it ended. */
export async function runEnded(page: Page, timeoutMs = 240_000): Promise<string | null> {
    await page.locator('.run-log').last().waitFor();
    await page.locator('.run-log:not([data-state="running"])').last().waitFor({ timeout: timeoutMs });
    return await page.locator('.run-log').last().getAttribute('data-state');
}

export async function openAdminPage(web: WebServer): Promise<{ page: Page; problems: PageProblems }> {
    const browser = await web.openBrowser();
    const problems = watchPage(browser.page);
    await web.signInBrowser(browser.context, ADMIN_ACCOUNT.email, ADMIN_ACCOUNT.password);
    return { page: browser.page, problems };
}

export interface PageProblems {
    /** Console errors, uncaught exceptions and Content-Security-Policy violations seen so far. */
    list(): string[];
}

/** Records what goes wrong in a page (a script error, a CSP violation) so that a test can demand none. */
export function watchPage(page: Page): PageProblems {
    const problems: string[] = [];
    page.on('console', (message) => {
        // ERR_NETWORK_CHANGED is the machine's doing (Docker making a network beside the browser), not the page's;
        // what the page does after it (open its streams again) is what the tests check.
        if (
            message.type() === 'error' &&
            !/Failed to load resource: (the server responded with a status of 4\d\d|net::ERR_NETWORK_CHANGED)/.test(message.text())
        ) {
            problems.push(`console: ${message.text()}`);
        }
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    return { list: () => [...problems] };
}

const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
let axeSource: string | undefined;

interface AxeViolation {
    id: string;
    impact: string | null;
    help: string;
    nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core on the page as it is and fails on any serious or critical violation, listing each with the
 * elements concerned. axe is evaluated through the DevTools protocol: a script tag (page.addScriptTag) would be
 * inline, which the UI's Content-Security-Policy refuses, as it should.
 */
export async function checkAccessibility(page: Page, options: { exclude?: string[] } = {}): Promise<void> {
    const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object');
    if (!loaded) {
        axeSource ??= Fs.readFileSync(AXE_SCRIPT, 'utf8');
        await page.evaluate(axeSource);
    }

    const violations = await page.evaluate(async (exclude: string[]) => {
        const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } })
            .axe;
        const context = exclude.length > 0 ? { include: [document], exclude: exclude.map((selector) => [selector]) } : document;
        const result = await axe.run(context, { resultTypes: ['violations'] });
        return result.violations.map(({ id, impact, help, nodes }) => ({
            id,
            impact,
            help,
            nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })),
        }));
    }, options.exclude ?? []);
    const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    if (serious.length > 0) {
        const report = serious
            .map(
                (violation) =>
                    `${violation.impact}: ${violation.id} (${violation.help}) at ${violation.nodes.map((node) => JSON.stringify(node.target)).join(', ')}`,
            )
            .join('\n');
        throw new Error(`accessibility violations on ${page.url()}:\n${report}`);
    }
}

/**
 * A full-page screenshot at test-output/screenshots/<name>.png, for review, when SCREENSHOTS=1: encoding them is
 * a good part of the browser's work, which a run that only checks has no use for.
 */
export async function screenshot(page: Page, name: string): Promise<string | undefined> {
    if (process.env.SCREENSHOTS !== '1') {
        return undefined;
    }

    Fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
    const file = Path.join(SCREENSHOTS_DIR, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return file;
}

export const NARROW_WIDTH = 390;

/**
 * Fails when the page, at a phone's width, is wider than the window (it would scroll sideways), naming the
 * elements that stick out. The viewport stays narrow for the rest of the page's life.
 */
export async function checkNoSidewaysScroll(page: Page): Promise<void> {
    await page.setViewportSize({ width: NARROW_WIDTH, height: 844 });
    const widths = await page.evaluate(() => {
        const limit = window.innerWidth;
        const wide = [...document.querySelectorAll('body *')]
            .filter((element) => {
                // What a scrolling box holds scrolls inside it, not the page (a positioned element may escape it).
                const positioned = ['absolute', 'fixed'].includes(getComputedStyle(element).position);
                for (
                    let parent = positioned ? null : element.parentElement;
                    parent && parent !== document.body;
                    parent = parent.parentElement
                ) {
                    if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(parent).overflowX)) {
                        return false;
                    }
                }

                return element.getBoundingClientRect().right > limit + 0.5;
            })
            .slice(0, 8)
            .map(
                (element) =>
                    `${element.tagName.toLowerCase()}.${[...element.classList].join('.')} (${Math.round(element.getBoundingClientRect().right)} px)`,
            );
        return { scrollWidth: document.documentElement.scrollWidth, innerWidth: limit, wide };
    });
    if (widths.scrollWidth > widths.innerWidth) {
        throw new Error(`${page.url()} is ${widths.scrollWidth} px wide at ${widths.innerWidth} px: ${widths.wide.join(', ')}`);
    }
}

/** Goes to `url`, letting the page go whatever an earlier test left unsaved there (it asks before it is left). */
export async function goLeavingUnsaved(page: Page, url: string): Promise<void> {
    const leave = (dialog: { accept(): Promise<void> }) => void dialog.accept();
    page.on('dialog', leave);
    try {
        await page.goto(url);
    } finally {
        page.off('dialog', leave);
    }
}

/** What a page shows, for a failure's message: its address, its headings and any alert or status. */
export async function describePage(page: Page): Promise<string> {
    const texts = async (selector: string) =>
        (
            await page
                .locator(selector)
                .allInnerTexts()
                .catch(() => [])
        ).map((text) => text.trim().replace(/\s+/g, ' ').slice(0, 200));
    const headings = await texts('h1, h2, h3');
    const notices = await texts('[role="alert"], [role="status"]');
    return `the page at ${page.url()} shows the headings ${JSON.stringify(headings)}${notices.length > 0 ? ` and ${JSON.stringify(notices)}` : ''}`;
}

/** Waits for the locator to be visible; when it is not, the error says what the page shows instead. */
export async function waitShowing(page: Page, locator: Locator, what: string): Promise<void> {
    try {
        await locator.waitFor();
    } catch (error) {
        throw new Error(`${what} did not show (${(error as Error).message.split('\n')[0]}): ${await describePage(page)}`, { cause: error });
    }
}
