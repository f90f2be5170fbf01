/**
 * Debian's chromium, driven by playwright-core (no browser download): headless, a fresh profile, no background
 * traffic, and names under the test domain resolved to loopback so that nginx serves them.
 */
import Fs from 'node:fs';

import { type BrowserContext, chromium, type Page } from 'playwright-core';

import { temporaryDirectory } from '../helpers/server.ts';
import { ensureDebianPackage } from './debian-packages.ts';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * How long an action or a navigation may take before the test fails: twice playwright's 30 s, for a page served by a
 * container or a sign-in that hops through a provider while other test files load the same two cores.
 */
const BUSY_MACHINE_WAIT_MS = 60_000;

export interface RunningChromium {
    /** A context of its own profile; certificates are not checked (the sites' are stand-ins until ACME). */
    context: BrowserContext;
    close(): Promise<void>;
}

export async function launchChromium(options: { loopbackDomain?: string } = {}): Promise<RunningChromium> {
    if (!ensureDebianPackage({ name: 'chromium', file: CHROMIUM }, 'the browser tests')) {
        throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);
    }

    const profile = temporaryDirectory('gatehouse-chromium-');
    // The profile folder is given as launchPersistentContext's first argument: playwright refuses --user-data-dir.
    const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        ignoreHTTPSErrors: true,
        args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            ...(options.loopbackDomain ? [`--host-resolver-rules=MAP *.${options.loopbackDomain} 127.0.0.1`] : []),
        ],
    });
    context.setDefaultTimeout(BUSY_MACHINE_WAIT_MS);
    for (const page of context.pages()) retryNavigationOnNetworkChange(page);
    context.on('page', retryNavigationOnNetworkChange);
    return {
        context,
        async close() {
            await context.close();
            Fs.rmSync(profile, { recursive: true, force: true });
        },
    };
}

/**
 * Chromium aborts a navigation with ERR_NETWORK_CHANGED when the host's interfaces change, which a test beside it
 * does whenever Docker makes or removes a network: the page's goto tries again then, a few times, and only then.
 */
function retryNavigationOnNetworkChange(page: Page): void {
    const goto = page.goto.bind(page);
    page.goto = async (url, options) => {
        for (let attempt = 1; ; attempt += 1) {
            try {
                return await goto(url, options);
            } catch (error) {
                if (attempt >= 3 || !String(error).includes('net::ERR_NETWORK_CHANGED')) {
                    throw error;
                }
            }
        }
    };
}
