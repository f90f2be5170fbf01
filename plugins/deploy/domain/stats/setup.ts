import type { Server } from '@hapi/hapi';

import { resourceStats } from './resource-stats.ts';

/**
 * The containers' resources are read while the server listens (not for a server only initialised, as the
 * command-line tool's is), so that the last hour is there when a page first asks for it.
 */
export default function readResourcesWhileListening(server: Server): void {
    server.ext('onPostStart', () => {
        resourceStats(server).start();
    });
    server.ext('onPreStop', () => {
        resourceStats(server).stop();
    });
}
