import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { onRenewalFailed } from '../acme/renewal-events.ts';
import { runs } from '../runs/run-service.ts';
import { resourceStats } from '../stats/resource-stats.ts';
import { CERTIFICATE_CHECK_JOB, type ExpiringCertificate } from './certificate-expiry.ts';
import { notifications } from './notification-service.ts';

const FAILED_STATES = new Set(['failed', 'rolled back', 'interrupted']);
const RESUME_INTERVAL_MS = 60_000;

/**
 * Notifications hear of the runs' ends (a failed, rolled-back or interrupted run; a backup's is backup-failed), of
 * containers turning unhealthy (the resources sampler's reading), and look at the certificates once a
 * day (jobs/check-certificates.ts, at a minute chosen per server); their sending stops with the server.
 */
export default async function setUpNotifications(server: Server): Promise<void> {
    runs(server).onEnded(async (run) => {
        if (!FAILED_STATES.has(run.state)) {
            return;
        }

        // A backup is a run of its own kind: its failure is the backup-failed event (a restore's is run-failed).
        const backup = run.kind === 'backup';
        await notifications(server).notify({
            kind: backup ? 'backup-failed' : 'run-failed',
            app: run.app,
            summary: backup
                ? `the backup of ${run.app} ${run.state === 'interrupted' ? 'was interrupted' : 'failed'}`
                : `${run.kind} of ${run.app} ${run.state === 'rolled back' ? 'was rolled back' : run.state}`,
            details: { run: run.id, kind: run.kind, state: run.state, error: run.error },
        });
    });
    await server.app.jobs.schedule({ name: CERTIFICATE_CHECK_JOB, cron: `${Crypto.randomInt(60)} 6 * * *` });
    server.app.jobs.onMessage(CERTIFICATE_CHECK_JOB, (message) => {
        const { expiring } = message as { expiring: ExpiringCertificate[] };
        notifications(server)
            .certificatesExpiring(expiring)
            .catch((error: unknown) =>
                server.log(['error', 'deploy', 'notifications'], `certificate warnings failed: ${(error as Error).message}`),
            );
    });
    // The resources sampler sees each container's health every interval; a turn to unhealthy of this server's app is told.
    resourceStats(server).onUnhealthy(({ app, service, container }) => {
        // The apps are imported by the first turn: a start does not load them and all they reach.
        import('../apps/app-service.ts')
            .then(async ({ apps }) => await apps(server).existing([app]))
            .then(async (existing) => {
                if (!existing.has(app)) return;
                await notifications(server).notify({
                    kind: 'container-unhealthy',
                    app,
                    summary: `the ${service} container of ${app} is unhealthy`,
                    details: { container, service },
                });
            })
            .catch((error: unknown) =>
                server.log(['error', 'deploy', 'notifications'], `telling of an unhealthy container failed: ${(error as Error).message}`),
            );
    });
    onRenewalFailed(server, async (domain, error) => {
        await notifications(server).certificateRenewalFailed(domain, error);
    });
    // Deliveries left pending by a server that stopped or died are taken up at start and looked for every minute
    // (a query, not a worker: most minutes there are none).
    let resuming: NodeJS.Timeout | undefined;
    const resume = () => {
        notifications(server)
            .resumeDeliveries()
            .catch((error: unknown) =>
                server.log(['error', 'deploy', 'notifications'], `taking up pending deliveries failed: ${(error as Error).message}`),
            );
    };
    server.ext('onPostStart', () => {
        resume();
        resuming = setInterval(resume, RESUME_INTERVAL_MS).unref();
    });
    server.ext('onPreStop', async () => {
        clearInterval(resuming);
        await notifications(server).stop();
    });
}
