import type { Lifecycle } from '@hapi/hapi';

import { type ConnectionChoice, idpConnection } from '../../../idp/connection-service.ts';
import { auditAs } from '../../audit-trail.ts';

export const getIdentityProvider: Lifecycle.Method = async (request) => await idpConnection(request.server).describe();

export const updateIdentityProvider: Lifecycle.Method = async (request) => {
    const choice = request.payload as ConnectionChoice;
    const answer = await idpConnection(request.server).connect(choice);
    auditAs(request, { target: choice.url, details: { kind: answer.kind, tokenChanged: choice.token !== undefined } });
    return answer;
};

export const discoverIdentityProvider: Lifecycle.Method = async (request) => {
    const { kind, url, token } = request.payload as { kind?: string; url: string; token: string };
    return await idpConnection(request.server).discover(kind, url, token);
};

export const bootstrapIdentityProvider: Lifecycle.Method = async (request) => {
    const { kind, url, bootstrapToken } = request.payload as { kind?: string; url: string; bootstrapToken: string };
    const answer = await idpConnection(request.server).bootstrap(url, bootstrapToken, kind);
    auditAs(request, { target: url });
    return answer;
};

export const disconnectIdentityProvider: Lifecycle.Method = async (request) => {
    const outcome = await idpConnection(request.server).disconnect();
    auditAs(request, { target: (await idpConnection(request.server).stored())?.url ?? '', details: { revoked: outcome.revoked } });
    return { ...(await idpConnection(request.server).describe()), tokenRevoked: outcome.revoked, note: outcome.note };
};
