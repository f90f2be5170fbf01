import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { runs } from '../runs/run-service.ts';

/** The daily job's name (jobs/check-updates.ts). */
export const UPDATE_CHECK_JOB = 'check-updates';

/** Imported when first needed: the updates reach the registries and the lifecycle, which a start does not. */
async function updateService(server: Server) {
    const { updates } = await import('./update-service.ts');
    return updates(server);
}

/**
 * Once a day (at a minute chosen per server) every deployed app's image is compared with its registry
 * (jobs/check-updates.ts ticks, the server looks; apps that asked for automatic updates are updated); what was
 * found of an app is forgotten when an update moves it, and its choice of automatic updates when it is deleted.
 */
export default async function setUpUpdates(server: Server): Promise<void> {
    await server.app.jobs.schedule({ name: UPDATE_CHECK_JOB, cron: `${Crypto.randomInt(60)} 7 * * *` });
    server.app.jobs.onMessage(UPDATE_CHECK_JOB, () => {
        updateService(server)
            .then(async (updates) => await updates.checkAll())
            .catch((error: unknown) =>
                server.log(['error', 'deploy', 'updates'], `looking for updates failed: ${(error as Error).message}`),
            );
    });
    runs(server).onEnded(async (run) => {
        if (run.kind === 'update' && run.state === 'succeeded') {
            await (await updateService(server)).forget(run.app);
        } else if (run.kind === 'delete' && run.state === 'succeeded') {
            await (await updateService(server)).forgetApp(run.app);
        }
    });
}
