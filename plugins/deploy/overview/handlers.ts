import type { Lifecycle } from '@hapi/hapi';

import { settings } from '../accounts/settings-service.ts';
import { deployUsers } from '../accounts/user-service.ts';
import { hostToolVersions } from './host-tools.ts';

export const getDashboard: Lifecycle.Method = async (request) => {
    const users = await deployUsers(request.server).list();
    return {
        users: { total: users.length, disabled: users.filter((user) => user.disabled).length },
        // Apps and runs arrive with the apps issue; until then there are none to count.
        apps: { total: 0, byState: {} },
        recentRuns: [],
    };
};

export const getSystem: Lifecycle.Method = async (request) => {
    const { config } = request.server.app;
    const oidc = await settings(request.server).get<{ enabled?: boolean; issuer?: string }>('deploy.oidc');
    return {
        tools: await hostToolVersions(),
        integrations: {
            oidcSignIn: { configured: oidc?.enabled === true, issuer: oidc?.issuer ?? null },
            identityProvider: { configured: false },
        },
        conventions: { publicUrl: config.publicUrl, dataDir: config.dataDir, services: config.services },
    };
};
