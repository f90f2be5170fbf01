import type { Server } from '@hapi/hapi';

import { setup } from './setup-service.ts';

/** On first start, the setup token goes to the log (and to DATA_DIR/setup-token) until the first administrator exists. */
export default function announceSetupToken(server: Server): void {
    server.ext('onPreStart', async () => {
        const token = await setup(server).ensureToken();
        if (token) {
            server.log(
                ['warn', 'setup'],
                `First run: create the first administrator with POST /api/setup and this one-time setup token: ${token}`,
            );
        }
    });
}
