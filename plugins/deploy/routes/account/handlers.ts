import type { Lifecycle } from '@hapi/hapi';

import { ForbiddenError, ValidationError } from '../../../../lib/errors.ts';
import { audit } from '../../domain/accounts/audit-service.ts';
import { sessions } from '../../domain/accounts/session-service.ts';
import { signIn } from '../../domain/accounts/sign-in-service.ts';
import { totp } from '../../domain/accounts/totp-service.ts';
import { deployUsers } from '../../domain/accounts/user-service.ts';
import { clientAddress, requireDeployCredentials } from '../../security.ts';

export const changePassword: Lifecycle.Method = async (request) => {
    const { user, sessionId } = requireDeployCredentials(request);
    const { currentPassword, newPassword } = request.payload as { currentPassword: string; newPassword: string };
    const confirmed = await signIn(request.server).confirm(user, clientAddress(request), { password: currentPassword });
    if (!confirmed) {
        await audit(request.server).record({
            actor: user,
            action: 'account.password',
            target: user.email,
            outcome: 'failure',
            clientAddress: clientAddress(request),
        });
        throw new ForbiddenError('the current password is wrong');
    }

    await deployUsers(request.server).update(user.id, { password: newPassword });
    await sessions(request.server).endAllFor(user.id, sessionId);
    await audit(request.server).record({
        actor: user,
        action: 'account.password',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { ok: true };
};

export const updateProfile: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const updated = await deployUsers(request.server).update(user.id, { name: (request.payload as { name: string }).name });
    await audit(request.server).record({
        actor: user,
        action: 'account.profile',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { user: updated };
};

export const beginTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    return await totp(request.server).beginSetup(user);
};

export const enableTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const recoveryCodes = await totp(request.server).enable(user, (request.payload as { code: string }).code);
    await audit(request.server).record({
        actor: user,
        action: 'account.totp.enable',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { recoveryCodes };
};

export const disableTotp: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    const { password, code } = request.payload as { password?: string; code?: string };
    if (!password && !code) {
        throw new ValidationError('password or code: one of them is required');
    }

    const confirmed = await signIn(request.server).confirm(user, clientAddress(request), { password, code });
    if (!confirmed) {
        throw new ForbiddenError('the password or code is wrong');
    }

    await totp(request.server).disable(user.id);
    await audit(request.server).record({
        actor: user,
        action: 'account.totp.disable',
        target: user.email,
        clientAddress: clientAddress(request),
    });
    return { ok: true };
};
