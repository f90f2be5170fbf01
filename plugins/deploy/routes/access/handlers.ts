import type { Lifecycle } from '@hapi/hapi';

import { type AccessGroup, appAccess } from '../../domain/access/access-service.ts';
import { auditAs } from '../../audit-trail.ts';

export const listAccessGroups: Lifecycle.Method = async (request) => {
    const { app } = request.query as { app?: string };
    return await appAccess(request.server).directory(app);
};

export const listDirectoryUsers: Lifecycle.Method = async (request) => {
    const { q } = request.query as { q?: string };
    return await appAccess(request.server).users(q ?? '');
};

export const updateAppAccess: Lifecycle.Method = async (request) => {
    const { groups } = request.payload as { groups: AccessGroup[] };
    const access = await appAccess(request.server).setGroups(request.params.name as string, groups);
    auditAs(request, {
        details: { groups: access.groups.map((group) => group.name).join(', '), mode: access.mode, applied: access.applied },
    });
    return { access };
};
