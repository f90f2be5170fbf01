import type { Lifecycle, Request } from '@hapi/hapi';

import { type ConnectionChoice, idpConnection } from '../../../idp/connection-service.ts';
import { audit } from '../../domain/accounts/audit-service.ts';
import { clientAddress, requireDeployCredentials } from '../../security.ts';

async function record(request: Request, action: string, target: string, details: Record<string, string | boolean | null> = {}) {
    await audit(request.server).record({
        actor: requireDeployCredentials(request).user,
        action,
        target,
        clientAddress: clientAddress(request),
        details,
    });
}

export const getIdentityProvider: Lifecycle.Method = async (request) => await idpConnection(request.server).describe();

export const updateIdentityProvider: Lifecycle.Method = async (request) => {
    const choice = request.payload as ConnectionChoice;
    const answer = await idpConnection(request.server).connect(choice);
    await record(request, 'idp.update', choice.url, { kind: answer.kind, tokenChanged: choice.token !== undefined });
    return answer;
};

export const discoverIdentityProvider: Lifecycle.Method = async (request) => {
    const { kind, url, token } = request.payload as { kind?: string; url: string; token: string };
    return await idpConnection(request.server).discover(kind, url, token);
};

export const bootstrapIdentityProvider: Lifecycle.Method = async (request) => {
    const { kind, url, bootstrapToken } = request.payload as { kind?: string; url: string; bootstrapToken: string };
    const answer = await idpConnection(request.server).bootstrap(url, bootstrapToken, kind);
    await record(request, 'idp.bootstrap', url);
    return answer;
};

export const disconnectIdentityProvider: Lifecycle.Method = async (request) => {
    const outcome = await idpConnection(request.server).disconnect();
    await record(request, 'idp.disconnect', (await idpConnection(request.server).stored())?.url ?? '', { revoked: outcome.revoked });
    return { ...(await idpConnection(request.server).describe()), tokenRevoked: outcome.revoked, note: outcome.note };
};
