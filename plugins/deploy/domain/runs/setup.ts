import type { Server } from '@hapi/hapi';

import { runs } from './run-service.ts';

/** Runs a stopped server left in progress are marked interrupted when the server starts again. */
export default function interruptLeftoverRuns(server: Server): void {
    server.ext('onPreStart', async () => {
        await runs(server).interruptLeftovers();
    });
}
