import type { Lifecycle, Request } from '@hapi/hapi';

import { terminals } from '../../domain/terminal/terminal-service.ts';
import { clientAddress, requireDeployCredentials } from '../../security.ts';

function appName(request: Request): string {
    return request.params.name as string;
}

export const getTerminal: Lifecycle.Method = async (request) => await terminals(request.server).state(appName(request));

export const openTerminal: Lifecycle.Method = async (request) => {
    const { service } = (request.payload ?? {}) as { service?: string };
    const { user } = requireDeployCredentials(request);
    return await terminals(request.server).issue(appName(request), service, user, clientAddress(request));
};
