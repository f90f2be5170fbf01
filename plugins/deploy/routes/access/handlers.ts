import type { Lifecycle } from '@hapi/hapi';

import { type AccessGroup, appAccess } from '../../domain/access/access-service.ts';
import { audit } from '../../domain/accounts/audit-service.ts';
import { clientAddress, requireDeployCredentials } from '../../security.ts';

export const listAccessGroups: Lifecycle.Method = async (request) => {
    const { app } = request.query as { app?: string };
    return await appAccess(request.server).directory(app);
};

export const listDirectoryUsers: Lifecycle.Method = async (request) => {
    const { q } = request.query as { q?: string };
    return await appAccess(request.server).users(q ?? '');
};

export const updateAppAccess: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const name = request.params.name as string;
    const { groups } = request.payload as { groups: AccessGroup[] };
    const entry = { actor: user, action: 'apps.access', target: name, clientAddress: clientAddress(request) };
    try {
        const access = await appAccess(request.server).setGroups(name, groups);
        await audit(request.server).record({
            ...entry,
            details: { groups: access.groups.map((group) => group.name).join(', '), mode: access.mode, applied: access.applied },
        });
        return { access };
    } catch (error) {
        await audit(request.server).record({ ...entry, outcome: 'failure', details: { reason: (error as Error).message.slice(0, 500) } });
        throw error;
    }
};
