import type { Server } from '@hapi/hapi';

import { runs } from './run-service.ts';

/**
 * Runs whose owner stopped (a killed or stopped server) are marked interrupted when the server starts, and then
 * whenever their owner's lease lapses while this server runs; runs another live server owns are left to it. What an
 * interrupted run had changed is undone from its journal before it is marked.
 */
export default function takeOverLapsedRuns(server: Server): void {
    runs(server).recoverWith(async (run, post) => {
        // Imported by the first run to undo: undoing reaches the whole engine, which a start without one need not load.
        const { recoverFromJournal } = await import('../lifecycle/run-recovery.ts');
        await recoverFromJournal(server)(run, post);
    });
    server.ext('onPreStart', async () => {
        await runs(server).startSweeping();
    });
    server.ext('onPostStop', () => {
        runs(server).stopSweeping();
    });
}
