import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';

import { auditAs } from '../../audit-trail.ts';
import { signIn } from '../../domain/accounts/sign-in-service.ts';
import { OidcSignInError, type OidcSettingsChange, oidc } from '../../domain/oidc/oidc-service.ts';
import { PENDING_SIGN_IN_COOKIE } from '../../domain/oidc/setup.ts';
import { signInClient } from '../../security.ts';

/** Every refusal is answered alike (the sign-in service has audited its reason): back to the start page with ?signin=failed. */
async function redirectOnRefusal(request: Request, h: ResponseToolkit, work: () => Promise<ResponseObject>): Promise<ResponseObject> {
    try {
        return await work();
    } catch (error) {
        if (error instanceof OidcSignInError) {
            return h.redirect(oidc(request.server).failureUrl);
        }

        throw error;
    }
}

export const startSignIn: Lifecycle.Method = async (request, h) =>
    await redirectOnRefusal(request, h, async () => {
        const { authorizationUrl, pending } = await signIn(request.server).beginOidc(signInClient(request));
        return h.redirect(authorizationUrl).state(PENDING_SIGN_IN_COOKIE, pending);
    });

export const completeSignIn: Lifecycle.Method = async (request, h) => {
    const pending: unknown = request.state[PENDING_SIGN_IN_COOKIE];
    h.unstate(PENDING_SIGN_IN_COOKIE);
    return await redirectOnRefusal(request, h, async () => {
        const { sid } = await signIn(request.server).completeOidc(pending, request.url.search, signInClient(request));
        request.cookieAuth.set({ sid });
        return h.redirect(oidc(request.server).homeUrl);
    });
};

export const getSettings: Lifecycle.Method = async (request) => await oidc(request.server).view();

export const updateSettings: Lifecycle.Method = async (request) => {
    const { view, clientSecretChange } = await oidc(request.server).update(request.payload as OidcSettingsChange);
    auditAs(request, {
        target: 'deploy.oidc',
        // Whether the client secret changed, never its value; the audit log drops keys that say "secret".
        details: { enabled: view.enabled, issuer: view.issuer, clientId: view.clientId, clientCredential: clientSecretChange },
    });
    return view;
};

export const testSettings: Lifecycle.Method = async (request) =>
    await oidc(request.server).test((request.payload as { issuer?: string }).issuer);
