import Boom from '@hapi/boom';
import type { Lifecycle, Request } from '@hapi/hapi';

import { audit } from '../../domain/accounts/audit-service.ts';
import { loginLimiter } from '../../domain/accounts/login-limiter.ts';
import { sessions } from '../../domain/accounts/session-service.ts';
import { totp } from '../../domain/accounts/totp-service.ts';
import { type DeployUser, deployUsers } from '../../domain/accounts/user-service.ts';
import { clientAddress, deployCredentials } from '../../security.ts';

/** A new session id for every step of a sign-in, so that a cookie from before it is worth nothing after. */
async function startSession(request: Request, user: DeployUser, mfaPending: boolean): Promise<void> {
    const previous = deployCredentials(request);
    if (previous) {
        await sessions(request.server).end(previous.sessionId);
    }

    const sid = await sessions(request.server).create(user.id, mfaPending, clientAddress(request));
    request.cookieAuth.set({ sid });
}

export const me: Lifecycle.Method = (request) => {
    const credentials = deployCredentials(request);
    if (!credentials || credentials.mfaPending) {
        throw Boom.unauthorized('not signed in');
    }

    return { user: credentials.user };
};

export const login: Lifecycle.Method = async (request) => {
    const { email, password } = request.payload as { email: string; password: string };
    const address = clientAddress(request);
    const user = await loginLimiter(request.server).guard(
        email,
        address,
        async (priority) => {
            const found = await deployUsers(request.server).authenticate(email, password, priority);
            return found && !found.disabled ? found : undefined;
        },
        (found) => !found.totpEnabled,
    );
    if (!user) {
        await audit(request.server).record({
            action: 'auth.login',
            target: email.toLowerCase(),
            outcome: 'failure',
            clientAddress: address,
        });
        throw Boom.unauthorized('wrong e-mail or password');
    }

    await startSession(request, user, user.totpEnabled);
    if (user.totpEnabled) {
        await audit(request.server).record({ actor: user, action: 'auth.password', target: user.email, clientAddress: address });
        return { mfaRequired: true };
    }

    await deployUsers(request.server).touchLogin(user.id);
    await audit(request.server).record({ actor: user, action: 'auth.login', target: user.email, clientAddress: address });
    return { mfaRequired: false, user };
};

export const submitMfa: Lifecycle.Method = async (request) => {
    const credentials = deployCredentials(request);
    if (!credentials?.mfaPending) {
        throw Boom.unauthorized('no sign-in is waiting for a code');
    }

    const { user } = credentials;
    const address = clientAddress(request);
    const code = (request.payload as { code: string }).code;
    if (!(await loginLimiter(request.server).guard(user.email, address, () => totp(request.server).verifyCode(user.id, code)))) {
        await audit(request.server).record({
            actor: user,
            action: 'auth.mfa',
            target: user.email,
            outcome: 'failure',
            clientAddress: address,
        });
        throw Boom.unauthorized('the code is not valid');
    }

    await startSession(request, user, false);
    await deployUsers(request.server).touchLogin(user.id);
    await audit(request.server).record({
        actor: user,
        action: 'auth.login',
        target: user.email,
        clientAddress: address,
        details: { mfa: true },
    });
    return { user };
};

export const logout: Lifecycle.Method = async (request, h) => {
    const credentials = deployCredentials(request);
    if (credentials) {
        await sessions(request.server).end(credentials.sessionId);
        await audit(request.server).record({
            actor: credentials.user,
            action: 'auth.logout',
            target: credentials.user.email,
            clientAddress: clientAddress(request),
        });
    }

    request.cookieAuth.clear();
    return h.response().code(204);
};
