import type { Lifecycle, Request } from '@hapi/hapi';

import { lifecycle } from '../../domain/lifecycle/lifecycle-service.ts';
import { updates } from '../../domain/updates/update-service.ts';
import type { AutomaticUpdates } from '../../domain/updates/version-tags.ts';
import { requireDeployCredentials } from '../../security.ts';

function nameOf(request: Request): string {
    return String((request.params as { name: string }).name);
}

export const listKnownUpdates: Lifecycle.Method = async (request) => ({ updates: await updates(request.server).known() });

export const listUpdates: Lifecycle.Method = async (request) => {
    const { otherMajors } = request.query as { otherMajors?: boolean };
    return await updates(request.server).available(nameOf(request), { otherMajors: otherMajors === true });
};

export const updateApp: Lifecycle.Method = async (request, h) => {
    const { tag } = request.payload as { tag: string };
    const runId = await lifecycle(request.server).updateImage(nameOf(request), requireDeployCredentials(request).user, tag);
    return h.response({ runId }).code(202);
};

export const setAutomaticUpdates: Lifecycle.Method = async (request) => {
    const { automatic } = request.payload as { automatic: AutomaticUpdates };
    return { automatic: await updates(request.server).setAutomatic(nameOf(request), automatic, requireDeployCredentials(request).user) };
};
