/**
 * Debian's chromium, driven by playwright-core (no browser download): headless, a fresh profile, no background
 * traffic, and names under the test domain resolved to loopback so that nginx serves them.
 */
import Fs from 'node:fs';

import { type BrowserContext, chromium } from 'playwright-core';

import { temporaryDirectory } from '../helpers/server.ts';
import { ensureDebianPackage } from './debian-packages.ts';

export const CHROMIUM = '/usr/bin/chromium';

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
    return {
        context,
        async close() {
            await context.close();
            Fs.rmSync(profile, { recursive: true, force: true });
        },
    };
}
