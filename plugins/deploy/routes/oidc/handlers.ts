import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';

import { audit } from '../../domain/accounts/audit-service.ts';
import { sessions } from '../../domain/accounts/session-service.ts';
import { type DeployUser, deployUsers } from '../../domain/accounts/user-service.ts';
import { clientAddress, deployCredentials, requireDeployCredentials } from '../../security.ts';
import { OidcSignInError, type OidcSettingsChange, oidc } from '../../domain/oidc/oidc-service.ts';
import { PENDING_SIGN_IN_COOKIE } from '../../domain/oidc/setup.ts';

/**
 * A complete session, as after password and second factor: the identity provider's sign-in stands in
 * for both (its own second factor, when it asks for one), so the deploy user's TOTP is not asked again.
 */
async function startSession(request: Request, user: DeployUser): Promise<void> {
    const previous = deployCredentials(request);
    if (previous) {
        await sessions(request.server).end(previous.sessionId);
    }

    const sid = await sessions(request.server).create(user.id, false, clientAddress(request));
    request.cookieAuth.set({ sid });
    await deployUsers(request.server).touchLogin(user.id);
}

/** Every refusal is audited with its reason and answered alike: back to the start page with ?signin=failed. */
async function refuse(request: Request, h: ResponseToolkit, error: unknown): Promise<ResponseObject> {
    if (!(error instanceof OidcSignInError)) {
        throw error;
    }

    await audit(request.server).record({
        action: 'auth.oidc',
        target: error.email,
        outcome: 'failure',
        clientAddress: clientAddress(request),
        details: { reason: error.reason.slice(0, 300) },
    });
    return h.redirect(oidc(request.server).failureUrl);
}

export const startSignIn: Lifecycle.Method = async (request, h) => {
    try {
        const { authorizationUrl, pending } = await oidc(request.server).begin();
        return h.redirect(authorizationUrl).state(PENDING_SIGN_IN_COOKIE, pending);
    } catch (error) {
        return await refuse(request, h, error);
    }
};

export const completeSignIn: Lifecycle.Method = async (request, h) => {
    const pending: unknown = request.state[PENDING_SIGN_IN_COOKIE];
    h.unstate(PENDING_SIGN_IN_COOKIE);
    try {
        const user = await oidc(request.server).complete(pending, request.url.search);
        await startSession(request, user);
        await audit(request.server).record({
            actor: user,
            action: 'auth.login',
            target: user.email,
            clientAddress: clientAddress(request),
            details: { method: 'oidc' },
        });
        return h.redirect(oidc(request.server).homeUrl);
    } catch (error) {
        return await refuse(request, h, error);
    }
};

export const getSettings: Lifecycle.Method = async (request) => await oidc(request.server).view();

export const updateSettings: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const { view, clientSecretChange } = await oidc(request.server).update(request.payload as OidcSettingsChange);
    await audit(request.server).record({
        actor: user,
        action: 'settings.oidc',
        target: 'deploy.oidc',
        clientAddress: clientAddress(request),
        // Whether the client secret changed, never its value; the audit log drops keys that say "secret".
        details: { enabled: view.enabled, issuer: view.issuer, clientId: view.clientId, clientCredential: clientSecretChange },
    });
    return view;
};

export const testSettings: Lifecycle.Method = async (request) =>
    await oidc(request.server).test((request.payload as { issuer?: string }).issuer);
