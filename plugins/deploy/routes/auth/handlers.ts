import Boom from '@hapi/boom';
import type { Lifecycle } from '@hapi/hapi';

import { signIn } from '../../domain/accounts/sign-in-service.ts';
import { clientAddress, deployCredentials, signInClient } from '../../security.ts';

export const me: Lifecycle.Method = (request) => {
    const credentials = deployCredentials(request);
    if (!credentials || credentials.mfaPending) {
        throw Boom.unauthorized('not signed in');
    }

    return { user: credentials.user };
};

export const login: Lifecycle.Method = async (request) => {
    const { email, password } = request.payload as { email: string; password: string };
    const { sid, user, mfaRequired } = await signIn(request.server).withPassword(email, password, signInClient(request));
    request.cookieAuth.set({ sid });
    return mfaRequired ? { mfaRequired } : { mfaRequired, user };
};

export const submitMfa: Lifecycle.Method = async (request) => {
    const credentials = deployCredentials(request);
    if (!credentials?.mfaPending) {
        throw Boom.unauthorized('no sign-in is waiting for a code');
    }

    const { code } = request.payload as { code: string };
    const { sid, user } = await signIn(request.server).withCode(credentials.user, code, signInClient(request));
    request.cookieAuth.set({ sid });
    return { user };
};

export const logout: Lifecycle.Method = async (request, h) => {
    const credentials = deployCredentials(request);
    if (credentials) {
        await signIn(request.server).signOut(credentials.user, credentials.sessionId, clientAddress(request));
    }

    request.cookieAuth.clear();
    return h.response().code(204);
};
