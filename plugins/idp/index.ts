/**
 * The identity provider in front of deployed apps. Adapters are found by name in `providers/`; the connection is
 * kept by connection-service.ts. At start, AUTHENTIK_URL with AUTHENTIK_BOOTSTRAP_TOKEN connect when nothing is saved.
 */
import type { Plugin } from '@hapi/hapi';

import { idpConnection } from './connection-service.ts';

export const idpPlugin: Plugin<void> = {
    name: 'gatehouse-idp',
    register(server) {
        server.ext('onPreStart', async () => {
            const outcome = await idpConnection(server).bootstrapFromEnvironment();
            if (outcome) {
                server.log(['info', 'idp'], outcome);
            }
        });
    },
};
