/** Trusting a test CA (pebble) for the ACME requests only, never for the rest of the process. */
import Fs from 'node:fs';
import Https from 'node:https';
import { createRequire } from 'node:module';

import type * as Acme from 'acme-client';

/** acme-client is loaded when a certificate is asked for, not at start (about 25 MB and half a second). */
export function acmeClient(): typeof Acme {
    return createRequire(import.meta.url)('acme-client') as typeof Acme;
}

/**
 * Runs `work` while the ACME client's requests to the directory's origin go through an agent that trusts `caFile`.
 * acme-client sends every request through one shared axios instance and takes no agent of its own, so the agent is
 * attached by an interceptor limited to that origin, and the interceptor is removed afterwards.
 */
export async function withTrustedCa<T>(directoryUrl: string, caFile: string | undefined, work: () => Promise<T>): Promise<T> {
    if (!caFile) {
        return await work();
    }

    const agent = new Https.Agent({ ca: Fs.readFileSync(caFile) });
    const origin = new URL(directoryUrl).origin;
    const interceptor = acmeClient().axios.interceptors.request.use((request) => {
        if (request.url && new URL(request.url).origin === origin) {
            request.httpsAgent = agent;
        }

        return request;
    });
    try {
        return await work();
    } finally {
        acmeClient().axios.interceptors.request.eject(interceptor);
    }
}
