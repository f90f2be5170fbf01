import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { RENEWAL_JOB, type RenewalSummary, renewalFailureListeners } from './renewal-events.ts';

/**
 * Certificates are renewed by a Bree job once a day, at a minute chosen per server so that many servers do
 * not all ask the CA at once; only when an ACME directory is configured.
 */
export default async function scheduleCertificateRenewal(server: Server): Promise<void> {
    if (!server.app.config.host.acmeDirectoryUrl) {
        return;
    }

    await server.app.jobs.schedule({ name: RENEWAL_JOB, cron: `${Crypto.randomInt(60)} 3 * * *` });
    server.app.jobs.onMessage(RENEWAL_JOB, (message) => {
        const { renewed, failed, reloadError } = message as RenewalSummary;
        if (renewed.length > 0) server.log(['deploy', 'acme'], `renewed certificates: ${renewed.join(', ')}`);
        for (const { domain, error } of failed) {
            server.log(['error', 'deploy', 'acme'], `renewing ${domain} failed: ${error}`);
            for (const listener of renewalFailureListeners(server)) {
                listener(domain, error).catch((failure: unknown) =>
                    server.log(['error', 'deploy', 'acme'], `a listener of a failed renewal failed: ${(failure as Error).message}`),
                );
            }
        }

        if (reloadError) server.log(['error', 'deploy', 'acme'], `nginx reload after renewal failed: ${reloadError}`);
    });
}
