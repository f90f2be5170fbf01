import type { Lifecycle } from '@hapi/hapi';

import { auditAs } from '../../audit-trail.ts';
import { settings } from '../../../../lib/settings.ts';
import { type SetupInput, setup } from '../../domain/accounts/setup-service.ts';

interface SetupPayload extends SetupInput {
    oidc?: { issuer?: string; clientId?: string; clientSecret?: string };
}

export const getStatus: Lifecycle.Method = async (request) => {
    const oidc = await settings(request.server).get<{ enabled?: boolean }>('deploy.oidc');
    const needsSetup = await setup(request.server).needsSetup();
    // Where to find the token, only while it is needed: after setup the server's folders are nobody's business.
    return { needsSetup, oidcEnabled: oidc?.enabled === true, ...(needsSetup ? { tokenFile: setup(request.server).tokenFile } : {}) };
};

export const completeSetup: Lifecycle.Method = async (request, h) => {
    const payload = request.payload as SetupPayload;
    const user = await setup(request.server).complete(payload);
    if (payload.oidc?.issuer && payload.oidc.clientId) {
        await settings(request.server).set('deploy.oidc', { enabled: true, issuer: payload.oidc.issuer, clientId: payload.oidc.clientId });
        if (payload.oidc.clientSecret) {
            await settings(request.server).setSecret('deploy.oidc.client_secret', payload.oidc.clientSecret);
        }
    }

    // No one was signed in: the administrator just made is the actor.
    auditAs(request, { actor: user, target: user.email, details: { oidc: Boolean(payload.oidc?.issuer) } });
    return h.response({ user }).code(201);
};
